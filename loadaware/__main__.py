from loadaware.cli import main

raise SystemExit(main())
