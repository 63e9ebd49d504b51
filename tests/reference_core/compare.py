"""The comparisons of one case, shared by the tests (which assert on the figures) and report.py
(which writes them): layout, resets, expert AMP observations, a trajectory along the same actions.
Every figure is a largest (or mean) absolute difference, ours minus theirs."""
import numpy as np

from tests.reference_core import cases as C
from tests.reference_core import common
from tests.reference_core.harness import max_abs


def _pin(ours, theirs, **pins):
    ours.set_pins(**pins)
    theirs.set_pins(**pins)


def compare_layout(ours, theirs):
    lo, lt = ours.layout(), theirs.layout()
    assert set(lo) == set(lt), set(lo) ^ set(lt)
    out = {}
    for key in sorted(lo):
        if isinstance(lo[key], list):
            out[key] = max_abs(lo[key], lt[key])
        elif isinstance(lo[key], bool):
            out[key] = 0.0 if lo[key] == lt[key] else 1.0
        else:
            out[key] = abs(float(lo[key]) - float(lt[key]))
    return out, lo


def _amp_at_reset(case):
    """The AMP agent observation right after a reset: imitate_amp only (the core's task scenes
    skip cSceneImitateAMP::Reset, which initialises the history, so theirs has none there)."""
    return case.amp and case.name.startswith("imitate_amp")


def _first_record(side, case, pins):
    side.set_pins(**pins)
    side.reset()
    return side.rollout([], amp=case.amp, amp_at_reset=_amp_at_reset(case))["steps"][0]


def compare_resets(ours, theirs, case):
    """Per reset time: the first decision's state, goal, time (and AMP agent observation)."""
    out = {}
    for t in C.RESET_TIMES:
        pins = C.pins_for(case, t)
        ro, rt = _first_record(ours, case, pins), _first_record(theirs, case, pins)
        missing = set(pins) - set(ours.rng.used)
        assert not missing, f"our scene never drew {missing}: the pins did not apply"
        fig = {"state": max_abs(ro["state"], rt["state"]), "goal": max_abs(ro["goal"], rt["goal"]),
               "time": abs(ro["time"] - rt["time"]), "terminate_equal": ro["terminate"] == rt["terminate"]}
        if _amp_at_reset(case):
            fig["amp_agent"] = max_abs(ro["amp_agent"], rt["amp_agent"])
        out[str(t)] = fig
    return out


def compare_expert(ours, theirs, case):
    """Expert observations after both sides reset to the same pinned state: the root height is
    taken above the reference origin, which a reset's ground-intersection lift moves."""
    for side in (ours, theirs):
        side.set_pins(**C.pins_for(case, C.RESET_TIMES[0]))
        side.reset()
    out = {}
    for t in C.EXPERT_TIMES:
        _pin(ours, theirs, expert_time=t)
        eo, et = ours.call("record_amp_obs_expert", 0), theirs.call("record_amp_obs_expert", 0)
        assert ours.rng.used.get("expert_time") == 1, "our expert observation did not use the pinned time"
        out[str(t)] = max_abs(eo, et)
    return out


def run_trajectory(ours, theirs, case):
    """Both sides from the first reset time along the same NUM_ACTIONS actions."""
    offset = ours.layout()["action_offset"]
    actions = common.noise_actions(offset, C.NUM_ACTIONS, seed=0)
    pins = C.pins_for(case, C.RESET_TIMES[0])
    for side in (ours, theirs):
        side.call("set_mode", case.mode)
        side.set_pins(**pins)
        side.reset()
    return ours.rollout(actions, amp=case.amp), theirs.rollout(actions, amp=case.amp)


def trajectory_figures(ro, rt):
    """Figures of two rollouts. Decision records are compared up to the shorter path; when the
    episode ended, the last record is taken at the end (a fall can be detected a few 1/600 s
    updates apart: 'end_time'), and '*_pre_end' figures leave that record out (the contact spike of
    a fall dominates the state's largest differences)."""
    so, st = ro["steps"], rt["steps"]
    n = min(len(so), len(st))
    ended = ro["end"] == "episode_end" or rt["end"] == "episode_end"
    n_dec = n - 1 if ended else n           # records taken at decisions on both sides
    fig = {"decisions_ours": len(so) - 1, "decisions_theirs": len(st) - 1,
           "end_ours": ro["end"], "end_theirs": rt["end"],
           "terminate_ours": [s["terminate"] for s in so], "terminate_theirs": [s["terminate"] for s in st],
           "time": max(abs(a["time"] - b["time"]) for a, b in zip(so[:n_dec], st[:n_dec])),
           "end_time": abs(so[n - 1]["time"] - st[n - 1]["time"])}
    rew_o = np.array([s["reward"] for s in so[1:n]])
    rew_t = np.array([s["reward"] for s in st[1:n]])
    d_rew = np.abs(rew_o - rew_t)
    fig.update(reward_max=float(d_rew.max()) if d_rew.size else 0.0,
               reward_mean=float(d_rew.mean()) if d_rew.size else 0.0,
               reward_first_ours=float(rew_o[0]) if rew_o.size else None,
               reward_first_theirs=float(rew_t[0]) if rew_t.size else None,
               reward_last_ours=float(rew_o[-1]) if rew_o.size else None,
               reward_last_theirs=float(rew_t[-1]) if rew_t.size else None,
               reward_mean_ours=float(rew_o.mean()) if rew_o.size else None,
               reward_mean_theirs=float(rew_t.mean()) if rew_t.size else None)

    def diffs(key, prefix):
        d = np.array([np.abs(np.subtract(a[key], b[key])) for a, b in zip(so[:n], st[:n])])
        if d.size == 0:
            return
        arg = np.unravel_index(d.argmax(), d.shape)
        fig.update({f"{prefix}_max": float(d.max()), f"{prefix}_mean": float(d.mean()),
                    f"{prefix}_max_at_decision": int(arg[0]), f"{prefix}_max_entry": int(arg[1]),
                    f"{prefix}_max_pre_end": float(d[:n_dec].max()), f"{prefix}_mean_pre_end": float(d[:n_dec].mean())})

    diffs("state", "state")
    fig["goal_max"] = max(max_abs(a["goal"], b["goal"]) for a, b in zip(so[:n], st[:n]))
    if len(so) > 1 and "amp_agent" in so[1]:
        d = np.array([np.abs(np.subtract(a["amp_agent"], b["amp_agent"])) for a, b in zip(so[1:n], st[1:n])])
        fig.update(amp_agent_max=float(d.max()), amp_agent_mean=float(d.mean()),
                   amp_agent_max_pre_end=float(d[:n_dec - 1].max()) if n_dec > 1 else 0.0,
                   amp_agent_mean_pre_end=float(d[:n_dec - 1].mean()) if n_dec > 1 else 0.0)
    return fig
