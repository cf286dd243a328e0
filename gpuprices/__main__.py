"""`python -m gpuprices ...`: the same command line as `gpuprices ...`."""

from gpuprices.cli import main

main()
