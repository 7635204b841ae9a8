# The evaluate_python driver. The tool sends it, with the call's inputs, as
# one JSON document on python3's standard input; the bootstrap (main.go)
# compiles this file and binds that document as INPUT. It binds the reads and
# globals, runs the code in expr or statements mode, renders the writes'
# templates from the final globals and prints one result record after a
# marker the tool chose. It applies no write itself: the tool applies them
# through the filesystem capability after checking the record, so a run
# that fails, times out or lies changes nothing the code could not.
import ast
import base64
import builtins
import io
import json
import os
import signal
import sys
import time
import traceback
import zlib

MAX_DEPTH, MAX_SEGMENT = 16, 80
HELPERS = ("read_text", "write_text", "vfs_reads")


def normalize(path):
    if not isinstance(path, str):
        raise TypeError("path must be a str, not %s" % type(path).__name__)
    s = path
    if s == "/workspace" or s.startswith("/workspace/"):
        s = s[len("/workspace"):]
    segs = [x for x in s.split("/") if x]
    for seg in segs:
        if any(c < " " or c > "~" for c in seg):
            raise ValueError("path must contain only printable ASCII characters: %r" % path)
        if seg in (".", ".."):
            raise ValueError("path segments may not include '.' or '..': %r" % path)
        if len(seg) > MAX_SEGMENT:
            raise ValueError("path segment exceeds %d characters: %r" % (MAX_SEGMENT, path))
    if len(segs) > MAX_DEPTH:
        raise ValueError("path depth exceeds %d segments: %r" % (MAX_DEPTH, path))
    if not segs:
        raise ValueError("path must reference a file, not the workspace root")
    return "/".join(segs)


class Tee(io.TextIOBase):
    """Passes the first `cap` characters through to a real stream, flushed
    at once so a killed run still shows its output, and drops the rest."""

    def __init__(self, real, cap):
        self.real, self.left = real, cap

    def writable(self):
        return True

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError("write() argument must be str, not %s" % type(s).__name__)
        if self.left > 0:
            part = s[: self.left]
            self.left -= len(part)
            self.real.write(part.encode("utf-8", "backslashreplace"))
            self.real.flush()
        return len(s)


class OutOfTime(BaseException):
    """Raised in the code when its time budget is spent. A BaseException,
    so `except Exception` in the code does not swallow it; code that
    swallows it anyway is killed by the host at the hard timeout."""


def out_of_time(signum, frame):
    raise OutOfTime()


def helpers(inp, reads, pending):
    def read_text(path):
        p = normalize(path)
        if p in reads:
            return reads[p]
        with open(p, encoding="utf-8") as f:
            return f.read()

    def write_text(path, content, mode="overwrite"):
        p = normalize(path)
        if mode not in ("create", "overwrite", "append"):
            raise ValueError("mode must be 'create', 'overwrite' or 'append', not %r" % (mode,))
        if not isinstance(content, str):
            raise TypeError("content must be a str, not %s" % type(content).__name__)
        if len(content) > inp["max_write_chars"]:
            raise ValueError("content of %s is %d characters, over the limit of %d" % (p, len(content), inp["max_write_chars"]))
        if p in reads:
            raise ValueError("%s is read by this call and cannot also be written" % p)
        if any(w["path"] == p for w in pending) or any(w["path"] == p for w in inp["writes"]):
            raise ValueError("%s is already written by this call" % p)
        if len(pending) + len(inp["writes"]) >= inp["max_writes"]:
            raise ValueError("at most %d writes per call" % inp["max_writes"])
        pending.append({"path": p, "content": content, "mode": mode})

    return read_text, write_text


def run(inp, ns):
    code, mode = inp["code"], inp["mode"]
    if mode == "expr":
        try:
            tree = ast.parse(code, "<code>", "eval")
        except SyntaxError as e:
            raise SyntaxError("mode 'expr' takes one expression (%s); use mode 'statements' for statements and assignments" % e.msg) from None
        if any(isinstance(n, ast.NamedExpr) for n in ast.walk(tree)):
            raise SyntaxError("mode 'expr' refuses assignments (:=); use mode 'statements'")
        return True, eval(compile(tree, "<code>", "eval"), ns)
    tree = ast.parse(code, "<code>", "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, "<code>", "exec"), ns)
    if last is None:
        return False, None
    return True, eval(compile(last, "<code>", "eval"), ns)


def stringify(value, cap):
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float) and value == value and abs(value) != float("inf"):
        return value
    if isinstance(value, str) and len(value) <= cap:
        return value
    return clip("!repr:" + repr(value), cap)


def clip(s, cap):
    return s if len(s) <= cap else s[:cap] + "...[truncated]"


def render(inp, ns, pending):
    out = []
    for i, w in enumerate(inp["writes"]):
        try:
            content = w["content"].format_map(ns)
        except KeyError as e:
            raise LookupError("writes[%d] (%s): the template names %s, which is not a global after the run; "
                              "write a literal brace as {{ or }}" % (i, w["path"], e)) from None
        except (ValueError, IndexError, AttributeError) as e:
            raise ValueError("writes[%d] (%s): the content is not a valid template (%s); "
                             "write a literal brace as {{ or }}" % (i, w["path"], e)) from None
        if len(content) > inp["max_write_chars"]:
            raise ValueError("writes[%d] (%s): the rendered content is %d characters, over the limit of %d"
                             % (i, w["path"], len(content), inp["max_write_chars"]))
        out.append({"path": w["path"], "content": content, "mode": w["mode"]})
    return out + pending


def process_age():
    """Seconds since this process started. The budget counts from there, not
    from here: on a loaded machine the interpreter's own start can take a
    good part of a second, and the host's kill counts from before it."""
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        start_ticks = int(stat[stat.rindex(b")") + 2 :].split()[19])
        now = time.clock_gettime(time.CLOCK_BOOTTIME)
        return max(0.0, now - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


def main():
    inp = INPUT  # noqa: F821 -- bound by the bootstrap that compiled this file
    marker = inp["marker"]
    out_real, err_real = sys.stdout.buffer, sys.stderr.buffer
    sys.stdout, sys.stderr = Tee(out_real, inp["stream_chars"]), Tee(err_real, inp["stream_chars"])
    reads, pending = dict(inp["reads"]), []
    read_text, write_text = helpers(inp, reads, pending)
    ns = {"__name__": "__main__", "__builtins__": builtins}
    ns.update(reads)
    ns.update({k: json.loads(v) for k, v in inp["globals"].items()})
    ns.update(read_text=read_text, write_text=write_text, vfs_reads=reads)
    record, status = {"value_repr": None, "globals": {}, "writes": [], "timed_out": False}, 0
    signal.signal(signal.SIGALRM, out_of_time)
    budget = inp["budget_ms"] / 1000
    # At most half the budget goes to the start: an age past that is more
    # likely a clock this reading misunderstands than a slow start.
    signal.setitimer(signal.ITIMER_REAL, budget - min(process_age(), budget / 2))
    try:
        try:
            has_value, value = run(inp, ns)
            if has_value and value is not None:
                record["value_repr"] = clip(repr(value), inp["repr_chars"])
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if e.code is not None and not isinstance(e.code, int):
                print(e.code, file=sys.stderr)
        if status == 0:
            record["writes"] = render(inp, ns, pending)
    except OutOfTime:
        signal.setitimer(signal.ITIMER_REAL, 0)
        record["timed_out"], status = True, 124
    except BaseException as e:
        signal.setitimer(signal.ITIMER_REAL, 0)
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != "<code>":
            tb = tb.tb_next  # the driver's own frames say nothing about the code
        traceback.print_exception(type(e), e, tb)
        status = 1
    signal.setitimer(signal.ITIMER_REAL, 0)
    if status != 0:
        record["writes"] = []
    record["status"] = status
    for k, v in list(ns.items()):
        if k in HELPERS or (k in reads and v is reads[k]):
            continue
        if not (k.startswith("__") and k.endswith("__")) and len(record["globals"]) < inp["max_globals"]:
            record["globals"][k] = stringify(v, inp["repr_chars"])
    data = base64.b64encode(zlib.compress(json.dumps(record).encode("utf-8"))).decode("ascii")
    out_real.write((marker + data + "\n").encode("ascii"))
    out_real.flush()
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    sys.exit(status if 0 <= status < 256 else 1)


main()
