"""The `gpuprices` command line: `main` builds the app, one module per command group."""
