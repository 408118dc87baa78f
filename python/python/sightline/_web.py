"""Where this package's copy of the page is: the files ``trunk build --release`` writes to
``dist/``, shipped under ``sightline/web/``. ``_html`` serves them to a notebook and ``_serve``
hands them to ``sightline serve``; neither imports the other for it."""

from pathlib import Path

WEB = Path(__file__).parent / "web"
