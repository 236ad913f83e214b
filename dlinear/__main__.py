import sys

from .cli_main import main

sys.exit(main())
