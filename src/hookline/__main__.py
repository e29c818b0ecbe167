from hookline.cli import main

raise SystemExit(main())
