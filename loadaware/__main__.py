from loadaware.cli import entry

entry()
