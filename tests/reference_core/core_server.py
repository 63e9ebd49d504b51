"""DeepMimic's C++ core in a process of its own, driven over stdin/stdout.

    python core_server.py <build folder with _DeepMimicCore.so> <DeepMimic checkout>

Own process: the core links Debian's Bullet 3.24 while pybullet bundles its own Bullet; one
process loading both risks symbol clashes. It runs in the checkout root (the core's data paths are
relative to it) and never imports pybullet or the project's env/.

Protocol: one JSON object per line each way. Request {"cmd": name, ...}; reply {"ok": value} or
{"error": message}. The core's own printf output goes to stderr (stdout carries replies only).
Commands:
    init {"args": [...]}          a new core: ParseArgs(args), Init() (replaces the previous one)
    pins {"pins": {...}}          the random draws to fix (common.PIN_ENV_VARS; null unsets)
    call {"name": n, "args": []}  one env call by its snake_case name (CoreEnv)
    layout                        common.layout
    rollout {"actions": [...], "amp": bool, "amp_at_reset": bool}   common.rollout from the current state
    bench {"decisions": n, "seconds": t, "seed": s, "std": x}   common.bench (the loop runs here: no
                                  per-step message is timed)
    quit
"""
import json
import os
import sys
import traceback

import numpy as np

CORE_SEED = 0


def main():
    build_dir, checkout = sys.argv[1], sys.argv[2]
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)                     # the core's printf goes to stderr
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    sys.path.insert(0, build_dir)
    os.chdir(checkout)
    import common
    import DeepMimicCore   # the SWIG module DeepMimicCore.py in build_dir

    class CoreEnv:
        """The core under env/env.py's snake_case names (numpy arrays out). A name is resolved once
        and kept on the instance, so that a call costs about what DeepMimic's own env wrapper costs
        (one Python function around the SWIG call): common.bench times loops over these."""

        def __init__(self, args):
            self.core = DeepMimicCore.cDeepMimicCore(False)
            # seeded as DeepMimic's env/deepmimic_env.py seeds it, with a fixed seed: the core's own
            # generator starts from time(NULL), and its unpinned draws (e.g. strike targets) would
            # change from one second to the next
            self.core.SeedRand(CORE_SEED)
            self.core.ParseArgs(list(args))
            self.core.Init()

        def __getattr__(self, name):
            camel = "".join(part[:1].upper() + part[1:] for part in name.split("_"))
            camel = {"GetAmpObsSize": "GetAMPObsSize", "GetAmpObsOffset": "GetAMPObsOffset",
                     "GetAmpObsScale": "GetAMPObsScale", "GetAmpObsNormGroup": "GetAMPObsNormGroup",
                     "RecordAmpObsAgent": "RecordAMPObsAgent", "RecordAmpObsExpert": "RecordAMPObsExpert",
                     "EnableAmpTaskReward": "EnableAMPTaskReward"}.get(camel, camel)
            fn = getattr(self.core, camel)

            def call(*args):
                args = [list(map(float, a)) if isinstance(a, (list, tuple, np.ndarray)) else a for a in args]
                out = fn(*args)
                return np.asarray(out) if isinstance(out, tuple) else out
            self.__dict__[name] = call
            return call

    env = None
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            cmd = req["cmd"]
            if cmd == "quit":
                proto.write(json.dumps({"ok": None}) + "\n")
                break
            if cmd == "init":
                env = None
                env = CoreEnv(req["args"])
                out = None
            elif cmd == "pins":
                for key, value in req["pins"].items():
                    var = common.PIN_ENV_VARS[key]
                    if value is None:
                        os.environ.pop(var, None)
                    else:
                        os.environ[var] = repr(float(value))
                out = None
            elif cmd == "call":
                out = getattr(env, req["name"])(*req.get("args", []))
                if isinstance(out, np.ndarray):
                    out = out.tolist()
            elif cmd == "layout":
                out = common.layout(env)
            elif cmd == "rollout":
                out = common.rollout(env, req["actions"], amp=req.get("amp", False),
                                     amp_at_reset=req.get("amp_at_reset", False))
            elif cmd == "bench":
                out = common.bench(env, req.get("decisions"), req.get("seconds"), seed=req.get("seed", 0),
                                   std=req.get("std", 0.05))
            else:
                raise ValueError(f"unknown command {cmd!r}")
            proto.write(json.dumps({"ok": out}) + "\n")
        except Exception:  # reported to the client, which raises it
            proto.write(json.dumps({"error": traceback.format_exc()}) + "\n")


if __name__ == "__main__":
    main()
