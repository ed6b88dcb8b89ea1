# The Python session of the code executor (src/features/actions/executors/session/code-session.ts): cells run one
# after the other in one namespace, so a variable set by one is there for the next.
# Protocol, one JSON object per line: a request {"code": "..."} on stdin; after the cell, the
# marker (from SOP_SESSION_MARK) on stderr, then the marker and the reply
# {"error": traceback or null, "exit": code or null, "files": [written paths]} on stdout.
# What the cell prints before the marker is its output (the parent caps it).
import ast
import json
import linecache
import os
import sys
import traceback

MARK = os.environ.pop("SOP_SESSION_MARK", "").encode()
ROOT = os.getcwd()
SKIP_DIRS = {"__pycache__", "node_modules", ".git"}
MAX_ENTRIES = 5000
MAX_FILES = 50


def snapshot():
    """(mtime, size) of the files under the working directory (hidden folders skipped)."""
    seen = {}
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")]
        for name in files:
            path = os.path.join(folder, name)
            try:
                st = os.stat(path)
            except OSError:
                continue
            seen[os.path.relpath(path, ROOT)] = (st.st_mtime_ns, st.st_size)
            if len(seen) >= MAX_ENTRIES:
                return seen
    return seen


def written(before, after):
    return sorted(p for p, s in after.items() if before.get(p) != s)[:MAX_FILES]


def user_traceback(exc):
    """The traceback without the driver's own frames."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


# Modules imported from the working directory (the code library), reloaded when their file changes.
module_times = {}


def forget_changed_modules():
    for name, mod in list(sys.modules.items()):
        path = getattr(mod, "__file__", None)
        if not path or not os.path.abspath(path).startswith(ROOT + os.sep):
            continue
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            mtime = None
        if name in module_times and module_times[name] != mtime:
            del sys.modules[name]
            module_times.pop(name, None)
        else:
            module_times[name] = mtime


def run_cell(number, code, namespace):
    filename = "<cell %d>" % number
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    tree = ast.parse(code, filename=filename)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body.pop()
    exec(compile(tree, filename, "exec"), namespace)
    if last is not None:
        value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace)
        if value is not None:
            print(repr(value))


def main():
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    replies = os.fdopen(os.dup(1), "wb", buffering=0)
    # the cell's code cannot read the requests (input() sees end of file)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = open(os.devnull, "r")
    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        sys.path.pop(0)
    sys.path.insert(0, ROOT)
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    number = 0
    for line in requests:
        if not line.strip():
            continue
        number += 1
        code = json.loads(line).get("code", "")
        forget_changed_modules()
        before = snapshot()
        error = None
        exit_code = None
        try:
            run_cell(number, code, namespace)
        except SystemExit as e:
            if e.code is None or isinstance(e.code, int):
                exit_code = e.code or 0
            else:
                print(e.code, file=sys.stderr)
                exit_code = 1
        except SyntaxError as e:
            error = "".join(traceback.format_exception_only(type(e), e))
        except BaseException as e:  # noqa: B902 - the cell's own exceptions, KeyboardInterrupt included
            error = user_traceback(e)
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()
            except Exception:
                pass
        reply = {"error": error, "exit": exit_code, "files": written(before, snapshot())}
        forget_changed_modules()
        try:
            os.write(2, MARK)
        except OSError:
            pass  # the cell closed stderr; the parent stops waiting for it
        replies.write(MARK + json.dumps(reply).encode() + b"\n")


main()
