"""``python harness.pyz [session]``: one judge request on stdin (:func:`.server.main`), or an interpreter session
(:func:`.session.run`). The archive's own ``__main__`` runs :func:`main` (see :mod:`.archive`)."""

import sys

from . import server, session


def main():
    """Run what the command line asks for (the argument ``session``, else one judge request); never returns."""
    if sys.argv[1:] == ["session"]:
        session.run()
    else:
        server.main()


if __name__ == "__main__":
    main()
