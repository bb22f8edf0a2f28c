"""Pictures of the model: `data` works out what each picture shows (pure Python, tested), `draw` draws it
(the only module that imports matplotlib, an optional extra)."""
