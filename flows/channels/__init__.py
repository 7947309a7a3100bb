"""Answers where buyers already are: the read-only HTTP API (`gpuprices api`) and the MCP
server (`gpuprices mcp`), both over the query layer (gpuprices.warehouse.queries), and the one
ranking of offers for a workload they share with the command line's inputs."""
