"""`python -m gpuprices`: the same command line as `gpuprices`."""

from gpuprices.flows.cli.main import main

if __name__ == "__main__":
    main()
