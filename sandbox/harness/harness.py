# Switchyard sandbox harness. It runs inside the sandbox (python3 under bubblewrap, or CPython
# compiled to WASI under wazero) and is the same for every backend.
#
# A run is two sandboxed processes, each running this script. The agent stage reads
# /sandbox/input.json (the inputs only: the answers never enter this sandbox), imports agent.py
# from the job directory (/job), calls run_batch(inputs, api_key) and writes ONE result frame
# with the predictions and usage on stdout. The score stage runs in a fresh sandbox that never
# loads agent.py: it imports eval.py, calls score(expected, predicted) for each row and writes
# one result frame with the scores, carrying the per-run nonce from its input.json so that a
# prediction printed by eval.py cannot pose as the result. Everything else the user's code
# prints passes through as plain output. The host validates each result again: this script
# only turns mistakes into readable messages.
#
# Frame: MAGIC, one kind byte, the payload length in decimal, "\n", the payload.
#   S  (empty) the harness started; written before any user code is loaded
#   Z  (wasm only) sleep for the given seconds; the host answers "0\n" on stdin
#   R  the result (JSON): predictions, scores, usage, errors
#   H  (wasm only) one raw HTTP/1.1 request for the gateway; the host answers on stdin with
#      "<length>\n" followed by the raw HTTP response.
import _json  # the C accelerator only: "import json" pulls in re, which is slow under WASI
import math
import os
import sys

MAGIC = b"\x1eSWITCHYARD\x1f"
INPUT = "/sandbox/input.json"
JOB_DIR = "/job"

_PID = os.getpid()
_OUT = 1


class _JSONContext:
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = None  # NaN and Infinity are not JSON; the host never writes them
    memo = {}


def json_loads(text):
    value, _ = _json.make_scanner(_JSONContext())(text, 0)
    return value


def json_dumps(value):
    """JSON for the result's plain types (finite floats only; the caller checks)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _json.encode_basestring_ascii(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(json_dumps(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(_json.encode_basestring_ascii(str(k)) + ": " + json_dumps(v)
                               for k, v in value.items()) + "}"
    raise TypeError("cannot encode %s" % type(value).__name__)


class JobFailure(Exception):
    """A failure to report: reason is "exception" or "invalid_result"."""

    def __init__(self, reason, message):
        super().__init__(message)
        self.reason = reason
        self.message = message


def write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def write_frame(kind, payload):
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except Exception:
            pass
    write_all(_OUT, MAGIC + kind + str(len(payload)).encode() + b"\n" + payload)


def describe(exc):
    name = type(exc).__name__
    text = str(exc)
    if len(text) > 2000:
        text = text[:2000] + "..."
    return name + (": " + text if text else "")


def raised(stage, exc, limits):
    try:
        import traceback

        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.__stderr__)
    except Exception:
        pass
    message = "%s raised %s" % (stage, describe(exc))
    if isinstance(exc, MemoryError) and limits.get("memory_bytes"):
        message += " (memory limit %d bytes)" % limits["memory_bytes"]
    return JobFailure("exception", message)


def apply_limits(limits):
    """Process backend: rlimits on CPU, address space, file size, processes, open files."""
    import resource

    cpu = max(1, int(limits["cpu_seconds"]))
    settings = [
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_AS, limits["memory_bytes"], limits["memory_bytes"]),
        (resource.RLIMIT_FSIZE, limits["file_bytes"], limits["file_bytes"]),
        (resource.RLIMIT_NPROC, limits["processes"], limits["processes"]),
        (resource.RLIMIT_NOFILE, 256, 256),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    for which, soft, hard in settings:
        resource.setrlimit(which, (soft, hard))


def start_socket_forwarder(socket_path):
    """Process backend: forward 127.0.0.1:<port> to the gateway's Unix socket, so that any
    HTTP client (urllib, requests, the openai SDK) reaches the gateway with a plain URL."""
    import socket
    import threading

    threading.stack_size(512 * 1024)
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(32)

    def pump(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def handle(client):
        try:
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(socket_path)
        except OSError:
            client.close()
            return
        back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
        back.start()
        pump(client, upstream)
        back.join()
        client.close()
        upstream.close()

    def accept():
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(client,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return server.getsockname()[1]


def read_exact_stdin(n):
    chunks = []
    while n > 0:
        data = os.read(0, min(n, 1 << 20))
        if not data:
            raise ConnectionError("gateway tunnel closed")
        chunks.append(data)
        n -= len(data)
    return b"".join(chunks)


def read_line_stdin():
    line = bytearray()
    while not line.endswith(b"\n"):
        data = os.read(0, 1)
        if not data:
            raise ConnectionError("gateway tunnel closed")
        line += data
        if len(line) > 32:
            raise ConnectionError("gateway tunnel: malformed response header")
    return bytes(line)


def install_http_tunnel(gateway_host):
    """Wasm backend: WASI has no sockets, so http.client's connection class is replaced by one
    that sends each raw request to the host as an H frame and reads the raw response from
    stdin. urllib.request and http.client code works unchanged."""
    import http.client
    import io

    class TunnelSocket:
        def __init__(self):
            self.pending = bytearray()

        def sendall(self, data):
            self.pending += data

        def send(self, data):
            self.pending += data
            return len(data)

        def makefile(self, mode="rb", *args, **kwargs):
            request = bytes(self.pending)
            self.pending.clear()
            write_frame(b"H", request)
            header = read_line_stdin()
            try:
                length = int(header.strip())
            except ValueError:
                raise ConnectionError("gateway tunnel: malformed response header")
            return io.BytesIO(read_exact_stdin(length))

        def settimeout(self, timeout):
            pass

        def setsockopt(self, *args):
            pass

        def close(self):
            pass

    class TunnelConnection(http.client.HTTPConnection):
        def connect(self):
            if self.host != gateway_host:
                raise ConnectionRefusedError(
                    "the sandbox reaches only the gateway (%s), not %s" % (gateway_host, self.host))
            self.sock = TunnelSocket()

    http.client.HTTPConnection = TunnelConnection


def install_sleep():
    """Wasm backend: WASI's clock sleeps are not available to CPython here, so time.sleep asks
    the host to sleep (a Z frame; the host answers "0\n" on stdin, or closes stdin at the
    deadline)."""
    import time

    def sleep(seconds):
        seconds = float(seconds)
        if not seconds >= 0:
            raise ValueError("sleep length must be non-negative")
        write_frame(b"Z", repr(seconds).encode())
        header = read_line_stdin()
        read_exact_stdin(int(header.strip() or 0))

    time.sleep = sleep


class _SerialExecutorFinder:
    """Provides concurrent.futures.thread under WASI, whose CPython ships without it (WASI
    has no threads): a ThreadPoolExecutor that runs each call when it is submitted, in
    order, so pure-stdlib agents written for a thread pool run unchanged, one call at a
    time. Installed lazily (a meta path finder), so runs that never import it pay nothing."""

    NAME = "concurrent.futures.thread"

    def find_spec(self, name, path=None, target=None):
        if name != self.NAME:
            return None
        import importlib.machinery

        return importlib.machinery.ModuleSpec(name, self)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        from concurrent.futures import _base

        class BrokenThreadPool(_base.BrokenExecutor):
            pass

        class ThreadPoolExecutor(_base.Executor):
            def __init__(self, max_workers=None, thread_name_prefix="", initializer=None, initargs=()):
                if max_workers is not None and max_workers <= 0:
                    raise ValueError("max_workers must be greater than 0")
                if initializer is not None and not callable(initializer):
                    raise TypeError("initializer must be a callable")
                self._max_workers = max_workers or 1
                self._initializer, self._initargs = initializer, initargs
                self._broken = None
                self._shutdown = False

            def submit(self, fn, /, *args, **kwargs):
                if self._broken:
                    raise BrokenThreadPool(self._broken)
                if self._shutdown:
                    raise RuntimeError("cannot schedule new futures after shutdown")
                if self._initializer is not None:
                    init, self._initializer = self._initializer, None
                    try:
                        init(*self._initargs)
                    except BaseException:
                        self._broken = "A thread initializer failed, the thread pool is not usable anymore"
                        raise BrokenThreadPool(self._broken)
                future = _base.Future()
                future.set_running_or_notify_cancel()
                try:
                    result = fn(*args, **kwargs)
                except BaseException as exc:
                    future.set_exception(exc)
                else:
                    future.set_result(result)
                return future

            def shutdown(self, wait=True, *, cancel_futures=False):
                self._shutdown = True

        module.ThreadPoolExecutor = ThreadPoolExecutor
        module.BrokenThreadPool = BrokenThreadPool


WASI_NO_SOCKETS = ("the WASI sandbox (--sandbox wasm) has no network sockets: HTTP to the model "
                   "gateway at OPENAI_BASE_URL works through urllib/http.client; anything else needs "
                   "the process sandbox")
WASI_NO_THREADS = ("the WASI sandbox (--sandbox wasm) has no threads: concurrent.futures."
                   "ThreadPoolExecutor runs calls one at a time here; real threads need the process sandbox")


WASI_NO_PROCESSES = ("the WASI sandbox (--sandbox wasm) has no processes: concurrent.futures."
                     "ProcessPoolExecutor cannot start workers here; use ThreadPoolExecutor, or the process sandbox")


class _NoProcessPoolFinder:
    """Provides concurrent.futures.process under WASI, whose CPython ships without it: its
    ProcessPoolExecutor fails at construction with a message saying why, where the import
    would otherwise fail with a bare ModuleNotFoundError."""

    NAME = "concurrent.futures.process"

    def find_spec(self, name, path=None, target=None):
        if name != self.NAME:
            return None
        import importlib.machinery

        return importlib.machinery.ModuleSpec(name, self)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        from concurrent.futures import _base

        class BrokenProcessPool(_base.BrokenExecutor):
            pass

        class ProcessPoolExecutor(_base.Executor):
            def __init__(self, *args, **kwargs):
                raise OSError(WASI_NO_PROCESSES)

        module.ProcessPoolExecutor = ProcessPoolExecutor
        module.BrokenProcessPool = BrokenProcessPool


class _ClearErrorsFinder:
    """Under WASI, socket lookups fail with AttributeError and Thread.start with a bare
    "can't start new thread": when socket or threading is first imported, this finder loads
    the real module and makes those calls fail with a message saying why."""

    def find_spec(self, name, path=None, target=None):
        if name not in ("socket", "threading"):
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _PatchingLoader(spec.loader, name)  # the real loader is shared: wrap it
        return spec


class _PatchingLoader:
    """Loads a module with the real (shared) loader, then makes its WASI failures explain
    themselves."""

    def __init__(self, real, name):
        self.real, self.name = real, name

    def create_module(self, spec):
        create = getattr(self.real, "create_module", None)
        return create(spec) if create else None

    def exec_module(self, module):
        self.real.exec_module(module)
        if self.name == "socket":
            def no_sockets(*args, **kwargs):
                raise OSError(WASI_NO_SOCKETS)

            module.getaddrinfo = no_sockets
            module.create_connection = no_sockets
            return
        start = module.Thread.start

        def start_or_explain(thread):
            try:
                start(thread)
            except RuntimeError as exc:
                raise RuntimeError(WASI_NO_THREADS) from exc

        module.Thread.start = start_or_explain


def install_wasi_shims():
    sys.meta_path.insert(0, _ClearErrorsFinder())
    sys.meta_path.append(_SerialExecutorFinder())
    sys.meta_path.append(_NoProcessPoolFinder())


def load_module(name, path, limits):
    if not os.path.exists(path):
        raise JobFailure("exception", "the bundle has no %s" % os.path.basename(path))
    try:
        # The job directory is first on sys.path, so this loads path (importlib.util is
        # avoided for the same start-up reason as json).
        module = __import__(name)
    except BaseException as exc:
        raise raised("import %s" % os.path.basename(path), exc, limits)
    return module


def type_name(value):
    return type(value).__name__


# How much of one row's feedback text is kept; the optimizer shows it to the proposer model.
MAX_FEEDBACK_CHARS = 4000


def as_number(value):
    """A real number as float, or None. bools count (True is 1.0); NaN and infinities do not."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (str, bytes, bytearray, complex)) or not hasattr(type(value), "__float__"):
        return None
    try:
        number = float(value)
    except Exception:
        return None
    if math.isfinite(number):
        return number
    return None


def run_agent(job, result):
    """Agent stage: run_batch over the inputs. The answers are not in this sandbox."""
    limits = job.get("limits", {})
    inputs = job["inputs"]

    agent = load_module("agent", os.path.join(JOB_DIR, "agent.py"), limits)
    run_batch = getattr(agent, "run_batch", None)
    if not callable(run_batch):
        raise JobFailure("invalid_result", "agent.py does not define run_batch(inputs, api_key)")

    try:
        returned = run_batch(list(inputs), os.environ.get("OPENAI_API_KEY", ""))
    except BaseException as exc:
        raise raised("run_batch", exc, limits)
    if not isinstance(returned, (tuple, list)) or len(returned) != 2:
        raise JobFailure("invalid_result",
                         "run_batch must return a pair (predictions, usage), got %s" % type_name(returned))
    predictions, usage = returned
    if not isinstance(predictions, (list, tuple)):
        raise JobFailure("invalid_result", "run_batch predictions must be a list, got %s" % type_name(predictions))
    if len(predictions) != len(inputs):
        raise JobFailure("invalid_result",
                         "run_batch returned %d predictions for %d inputs" % (len(predictions), len(inputs)))
    if usage is None:
        usage = {}
    if not isinstance(usage, dict):
        raise JobFailure("invalid_result", "run_batch usage must be a dict, got %s" % type_name(usage))
    clean_usage = {}
    for key in ("tokens", "cost"):
        number = as_number(usage.get(key, 0))
        if number is None or number < 0 or isinstance(usage.get(key), bool):
            raise JobFailure("invalid_result",
                             "run_batch usage[%r] must be a non-negative number, got %r" % (key, usage.get(key)))
        clean_usage[key] = int(number) if key == "tokens" else number

    texts = []
    for i, p in enumerate(predictions):
        if isinstance(p, str):
            texts.append(p)
            continue
        try:
            texts.append(str(p))
        except BaseException as exc:
            raise JobFailure("invalid_result", "prediction %d (%s) cannot be turned into a string: %s"
                             % (i, type_name(p), describe(exc)))
    result["predictions"] = texts
    result["usage"] = clean_usage


def run_score(job, result):
    """Score stage: score(expected, predicted) for each row, in a sandbox of its own that
    never loads agent.py. The predictions are the agent stage's, as strings."""
    limits = job.get("limits", {})
    evaluator = load_module("eval", os.path.join(JOB_DIR, "eval.py"), limits)
    score = getattr(evaluator, "score", None)
    if not callable(score):
        raise JobFailure("invalid_result", "eval.py does not define score(expected, predicted)")
    scores, feedback = [], []
    for i, (expected, predicted) in enumerate(zip(job["expected"], job["predicted"])):
        try:
            value = score(expected, predicted)
        except BaseException as exc:
            failure = raised("score (row %d)" % i, exc, limits)
            if isinstance(exc, AttributeError) and "'str' object has no attribute" in str(exc):
                # A DSPy metric(example, pred, trace=None) pasted as is.
                failure.message += (" (score gets the expected and predicted answers as strings, not a"
                                    " dspy.Example and a Prediction: use expected for example.answer and"
                                    " predicted for pred.answer)")
                failure.args = (failure.message,)
            raise failure
        note = None
        if isinstance(value, (tuple, list)) and len(value) == 2:
            # (score, feedback): the feedback is shown to the proposer beside the row.
            value, note = value
            if note is not None:
                try:
                    note = note if isinstance(note, str) else str(note)
                except BaseException as exc:
                    raise JobFailure("invalid_result", "the feedback for row %d (%s) cannot be turned into a string: %s"
                                     % (i, type_name(note), describe(exc)))
                note = note[:MAX_FEEDBACK_CHARS]
        feedback.append(note)
        number = as_number(value)
        if number is None:
            raise JobFailure("invalid_result",
                             "score returned %s %.100r for row %d; expected a float in [0, 1] or a pair (score, feedback)"
                             % (type_name(value), value, i))
        if number < -1e-9 or number > 1 + 1e-9:
            raise JobFailure("invalid_result",
                             "score returned %r for row %d; expected a float in [0, 1]" % (value, i))
        scores.append(min(1.0, max(0.0, number)))
    result["scores"] = scores
    if any(note is not None for note in feedback):
        result["feedback"] = feedback


def main():
    global _OUT
    result = {"errors": []}
    try:
        with open(INPUT, "r", encoding="utf-8") as f:
            job = json_loads(f.read())
        stage = job.get("stage")
        if job.get("nonce"):
            result["nonce"] = job["nonce"]
        mode = job.get("mode")
        if mode == "process":
            try:
                _OUT = os.dup(1)
            except OSError:
                _OUT = 1
            apply_limits(job["limits"])
        write_frame(b"S", b"")
        if mode == "wasm":
            install_sleep()
            install_wasi_shims()
        os.environ["OPENAI_API_KEY"] = job.get("api_key", "")
        os.environ["SWITCHYARD_MODEL"] = job.get("model", "")
        gateway = job.get("gateway") or {}
        if gateway.get("socket"):
            port = start_socket_forwarder(gateway["socket"])
            os.environ["OPENAI_BASE_URL"] = "http://127.0.0.1:%d%s" % (port, gateway.get("path", ""))
        elif gateway.get("tunnel_host"):
            install_http_tunnel(gateway["tunnel_host"])
            os.environ["OPENAI_BASE_URL"] = "http://%s%s" % (gateway["tunnel_host"], gateway.get("path", ""))
        sys.path.insert(0, JOB_DIR)
        if stage == "score":
            run_score(job, result)
        else:
            run_agent(job, result)
    except JobFailure as failure:
        result["errors"].append({"reason": failure.reason, "message": failure.message})
    except BaseException as exc:
        try:
            import traceback

            traceback.print_exc()
        except Exception:
            pass
        result["errors"].append({"reason": "exception", "message": "harness failed: " + describe(exc)})
    if os.getpid() != _PID:
        os._exit(1)  # a child forked by the user's code never reports
    try:
        payload = json_dumps(result).encode()
    except Exception as exc:
        payload = json_dumps({"errors": [{"reason": "invalid_result",
                                          "message": "result cannot be encoded: " + describe(exc)}]}).encode()
    write_frame(b"R", payload)
    os._exit(0)


if __name__ == "__main__":
    main()
