"""Which interview session a folder belongs to: a marker file at the session folder's top.

Below both `progress` (which tags practice attempts made inside an interview) and `sessions`
(which writes the marker), so neither imports the other for it.
"""
import json
from pathlib import Path

MARKER = ".kata-session"


def session_id_for(path: Path) -> str | None:
    """The session whose folder holds `path`, found by the marker file, or None."""
    path = Path(path).resolve()
    for folder in (path, *path.parents):
        marker = folder / MARKER
        if marker.is_file():
            try:
                return json.loads(marker.read_text())["session"]
            except (OSError, ValueError, KeyError):
                return None
    return None
