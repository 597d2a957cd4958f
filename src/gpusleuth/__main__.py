from gpusleuth.cli import main

main()
