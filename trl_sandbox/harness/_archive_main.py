"""The archive's ``__main__.py`` (see :mod:`.archive`): ``python trl_sandbox_harness.pyz [session]``.

It loads the package (and the archive's two top-level modules) from the archive itself. Where the archive holds a
module's code compiled by the host's Python and this interpreter reads that bytecode (the same magic number: the same
minor version), it runs that code, its file names set to this archive's path; else it compiles the source, once
(``zipimport`` compiles a source module twice: once to name its file while it makes the module's spec, once to run
it). Compiling the harness was most of what a request cost before the program ran: measured on Python 3.11, the
imports took 100 ms of a 139 ms request compiled here (91 ms with the host's code), 48 ms for the harness as one
``.py`` file, 60 ms as an archive imported by ``zipimport``. Then it runs :func:`trl_sandbox_harness.__main__.main`.
Standard library only, Python >= 3.8.
"""

import _frozen_importlib_external
import marshal
import os
import sys
import zipimport
from importlib.machinery import ModuleSpec

PACKAGE = "trl_sandbox_harness"
#: Top-level modules of the archive this loader loads too (see :mod:`.archive`).
TOP_LEVEL = ("trl_sandbox_reaper", "trl_sandbox_seccomp")
#: What a compiled module's member starts with: the magic number of the Python that compiled it.
MAGIC = _frozen_importlib_external.MAGIC_NUMBER
CODE_TYPE = type(compile("", "", "exec"))


def renamed(code, filename):
    """``code`` and every code object it holds (functions, classes) with ``co_filename`` set to ``filename``."""
    consts = tuple(renamed(c, filename) if type(c) is CODE_TYPE else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


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
        """A spec for the package, its modules and :data:`TOP_LEVEL` (None for every other name)."""
        if fullname != PACKAGE and not fullname.startswith(PACKAGE + ".") and fullname not in TOP_LEVEL:
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

    def compiled(self, fullname, filename):
        """The module's code as the host compiled it (the member ``<module path>.pyc-<magic>``), named
        ``filename``; None when the archive holds none for this interpreter's magic number."""
        try:
            data = self.files.get_data(self._member(fullname)[:-3] + ".pyc-" + MAGIC.hex())
        except OSError:  # another Python's archive, or none compiled
            return None
        if data[:len(MAGIC)] != MAGIC:
            return None
        return renamed(marshal.loads(data[len(MAGIC):]), filename)

    def exec_module(self, module):
        origin = module.__spec__.origin
        code = self.compiled(module.__name__, origin)
        if code is None:
            code = compile(self.get_source(module.__name__), origin, "exec", dont_inherit=True)
        exec(code, module.__dict__)


sys.meta_path.insert(0, ArchiveLoader(os.path.abspath(sys.argv[0])))

from trl_sandbox_harness.__main__ import main  # noqa: E402 - the loader first

main()
