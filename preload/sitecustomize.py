"""cprof-run --torch-ops: once the program imports torch, PyTorch's own per-op NVTX ranges go to cprof."""
import sys


def _cprof_torch_ops():
    import os
    from importlib.machinery import PathFinder

    here = os.path.dirname(os.path.abspath(__file__))
    # the program sees its own sys.path, and its own sitecustomize (one later on the path) still runs
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    user = PathFinder.find_spec("sitecustomize", sys.path)
    state = {"on": False, "tid": None}

    def say(why, torch):
        sys.stderr.write("cprof: --torch-ops: no ATen op ranges from torch %s (%s); the run goes on without them\n"
                         % (getattr(torch, "__version__", "?"), why))

    def enable(torch):
        import threading  # not before: a program may patch it first (gevent); torch has imported it by now
        try:
            from torch.autograd import profiler as prof
            from torch._C._profiler import ProfilerConfig, ProfilerState, _ExperimentalConfig
            real_on, real_off = prof._enable_profiler, prof._disable_profiler
            # record_shapes off: shapes would make every range's text longer and the op slower
            cfg = ProfilerConfig(ProfilerState.NVTX, False, False, False, False, False, _ExperimentalConfig())
            real_on(cfg, set())
        except Exception as e:  # too old or too new for this method
            say("%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""), torch)
            return
        state.update(on=True, tid=threading.get_ident())

        def ours(on):
            # the callbacks are this thread's; only here can they be switched
            if threading.get_ident() != state["tid"] or state["on"] == on:
                return
            try:
                real_on(cfg, set()) if on else real_off()
                state["on"] = on
            except Exception:
                pass

        # the program's own profiler (torch.profiler, emit_nvtx) takes the thread's profiler slot: step aside
        def enable_profiler(*a, **k):
            ours(False)
            try:
                return real_on(*a, **k)
            except BaseException:
                ours(True)
                raise

        def disable_profiler(*a, **k):
            try:
                return real_off(*a, **k)
            finally:
                ours(True)

        prof._enable_profiler, prof._disable_profiler = enable_profiler, disable_profiler
        import atexit
        atexit.register(ours, False)

    class Finder:
        def find_spec(self, name, path=None, target=None):
            if name != "torch":
                return None
            sys.meta_path.remove(self)
            from importlib.util import find_spec
            spec = find_spec(name)
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                enable(module)
            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, Finder())
    return user


_cprof_user = _cprof_torch_ops()
if _cprof_user is not None and _cprof_user.loader is not None:
    del sys.modules[__name__]
    import importlib.util
    _m = importlib.util.module_from_spec(_cprof_user)
    sys.modules[__name__] = _m
    _cprof_user.loader.exec_module(_m)
