"""The archive's ``__main__.py`` (see :mod:`.archive`): ``python trl_sandbox_harness.pyz [session]``.

It loads the package from the archive itself, compiling each module once: ``zipimport`` compiles a source module
twice (once to name its file while it makes the module's spec, once to run it), which cost 12 ms per execution
(measured on Python 3.11, 48 ms for the harness as one ``.py`` file, 60 ms as an archive imported by ``zipimport``).
Then it runs :func:`trl_sandbox_harness.__main__.main`. Standard library only, Python >= 3.8.
"""

import os
import sys
import zipimport
from importlib.machinery import ModuleSpec

PACKAGE = "trl_sandbox_harness"


class ArchiveLoader:
    """A finder and loader of the package's modules in the archive ``archive`` (the path ``python`` was given)."""

    def __init__(self, archive):
        self.archive = archive
        self.files = zipimport.zipimporter(archive)

    def _member(self, fullname):
        if fullname == PACKAGE:
            return PACKAGE + "/__init__.py"
        return fullname.replace(".", "/") + ".py"

    def find_spec(self, fullname, path=None, target=None):
        """A spec for the package and its modules (None for every other name)."""
        if fullname != PACKAGE and not fullname.startswith(PACKAGE + "."):
            return None
        origin = self.archive + "/" + self._member(fullname)
        spec = ModuleSpec(fullname, self, origin=origin, is_package=fullname == PACKAGE)
        spec.has_location = True  # __file__: a path inside the archive, as zipimport gives
        if fullname == PACKAGE:
            spec.submodule_search_locations = [self.archive + "/" + PACKAGE]
        return spec

    def create_module(self, spec):
        return None

    def get_source(self, fullname):
        """The module's source text (tracebacks show its lines)."""
        return self.files.get_data(self._member(fullname)).decode("utf-8")

    def exec_module(self, module):
        code = compile(self.get_source(module.__name__), module.__spec__.origin, "exec", dont_inherit=True)
        exec(code, module.__dict__)


sys.meta_path.insert(0, ArchiveLoader(os.path.abspath(sys.argv[0])))

from trl_sandbox_harness.__main__ import main  # noqa: E402 - the loader first

main()
