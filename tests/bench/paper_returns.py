"""Re-scores an agent's test episodes under the DeepMimic paper's (2018) imitation reward and
writes each figure the paper's Table 1 "normalized return" and this project's evaluation report.

    .venv/bin/python -m tests.bench.paper_returns --arg_file args/run_humanoid3d_walk_args.txt \
        --episodes 2 --rand_seed 1000 --json docs/bench/paper_returns_walk.json

The episodes are app/evaluate.py's (test mode: mean actions, no training, from a fresh reset); the
scene's own reward (DeepMimic's code reward, env/scenes/imitate_reward.py) drives nothing here
but the recorded figures: the policy acts the same whatever is scored. At each decision, besides
the scene's five terms, the reward is also computed from the same simulated and reference
characters under:

- "code":           the scene's reward (DeepMimic's code: weights 0.5 pose, 0.05 vel, 0.15 end
                    effectors, 0.2 root, 0.1 centre-of-mass velocity; identical for the humanoid
                    in DeepMimic's first release, 3ca04d3 of 2018-10-14, and its 2021 code);
- "paper_weights":  the code's five terms with the paper's weights (0.65 pose, 0.1 vel, 0.15 end
                    effectors, 0.1 centre of mass, no root term);
- "paper_literal":  the paper's printed formulas: exp(-2 sum_j |q_j error|^2) over the root
                    rotation and the 12 actuated joints, unweighted; exp(-0.1 sum_j |joint
                    velocity error|^2) over the same, unweighted; exp(-40 sum_e |p_e error|^2)
                    over the 4 end effectors (root-relative, heading frame, as the code has them);
                    exp(-10 |centre-of-mass position error|^2) (height above the ground); the
                    paper's weights.

A fallen decision scores 0 under all three. Per episode: the mean per decision of each reward
(this project's figure for the code reward; for the other two, the mean of what was recorded at
each decision, which for the code reward agrees with the agent's own rewards to ~1e-4) and the
paper's normalized return, the episode's
return divided by the most an episode can earn (20 s at 30 Hz: 600, DeepMimic issue #112), so a
fall's missing decisions count as 0. Also the check that the reference scored against itself
earns 1 under every reward.
"""
import argparse
import json
import math
import shlex
import sys
from dataclasses import asdict
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from util.cli import configure_process_env  # noqa: E402

configure_process_env()

import numpy as np  # noqa: E402

PAPER_WEIGHTS = {"pose": 0.65, "vel": 0.1, "end_eff": 0.15, "com": 0.1}
MAX_DECISIONS = 600     # 20 s episodes at 30 Hz: the most reward an episode can earn (DeepMimic #112)
VARIANTS = ("r_code", "r_paper_weights", "r_paper_literal")
LITERAL_TERMS = ("pose_literal", "vel_literal", "end_eff_literal", "com_pos_literal")


class PaperRewards:
    """The paper's reward readings for one ImitateScene, from the scene's own snapshots."""

    def __init__(self, scene):
        self.scene, self.rf = scene, scene.reward_fn
        self.vel_mask = self.rf.vel_weights > 0      # root angular velocity and every joint dof
        self.masses = scene.sim_char.masses
        self.total_mass = scene.sim_char.total_mass

    def com_pos(self, bodies, ground_height):
        com = self.masses @ bodies.pos / self.total_mass
        com[1] -= ground_height
        return com

    def literal_terms(self, sim, ref, sim_bodies, ref_bodies):
        rf = self.rf
        rot = rf.rot_cols
        angles = 2.0 * np.arctan2(np.sqrt(np.maximum(1.0 - np.sum(sim.pose[rot] * ref.pose[rot], axis=1) ** 2, 0.0)),
                                  np.abs(np.sum(sim.pose[rot] * ref.pose[rot], axis=1)))
        rev = ref.pose[rf.rev_cols] - sim.pose[rf.rev_cols]
        pose_err = float(np.sum(angles ** 2) + np.sum(rev ** 2))
        dv = (ref.vel - sim.vel)[self.vel_mask]
        vel_err = float(np.sum(dv * dv))
        ee_err = sum((a - b) ** 2 for pa, pb in zip(rf._heading_local(ref, ref.pose.tolist()),
                                                     rf._heading_local(sim, sim.pose.tolist()))
                     for a, b in zip(pa, pb))
        dcom = self.com_pos(ref_bodies, ref.ground_height) - self.com_pos(sim_bodies, sim.ground_height)
        return {"pose_literal": math.exp(-2.0 * pose_err), "vel_literal": math.exp(-0.1 * vel_err),
                "end_eff_literal": math.exp(-40.0 * ee_err), "com_pos_literal": math.exp(-10.0 * float(dcom @ dcom))}

    def extra(self, code_reward, terms, sim, ref, sim_bodies, ref_bodies):
        lit = self.literal_terms(sim, ref, sim_bodies, ref_bodies)
        return {"r_code": code_reward,
                "r_paper_weights": sum(w * terms[k] for k, w in PAPER_WEIGHTS.items()),
                "r_paper_literal": (PAPER_WEIGHTS["pose"] * lit["pose_literal"] + PAPER_WEIGHTS["vel"] * lit["vel_literal"]
                                    + PAPER_WEIGHTS["end_eff"] * lit["end_eff_literal"]
                                    + PAPER_WEIGHTS["com"] * lit["com_pos_literal"]),
                **lit}

    def now(self):
        """The extra figures for the characters as they are (the scene's calc_reward has run)."""
        s = self.scene
        return self.extra(None, s.reward_terms, s.sim_snapshot(), s.ref_snapshot(), s.sim_body_states(),
                          s.ref_body_states())

    def self_check(self):
        """Every reward of the reference scored against itself."""
        s = self.scene
        ref, ref_bodies = s.ref_snapshot(), s.ref_body_states()
        code, terms = self.rf.calc(ref, ref)
        out = self.extra(code, terms, ref, ref, ref_bodies, ref_bodies)
        out.update({f"code_{k}": v for k, v in terms.items()})
        return out


def install(scene):
    """Wraps scene.calc_reward: after it, the extra figures join scene.reward_terms (zeros after a
    fall), which the evaluation's recorder averages per episode with the five terms."""
    paper = PaperRewards(scene)
    original = scene.calc_reward
    keys = VARIANTS + LITERAL_TERMS
    checks = []

    def calc_reward(agent_id=0):
        reward = original(agent_id)
        if not checks:
            checks.append(paper.self_check())
        if any(scene.reward_terms.values()):
            extra = paper.now()
            extra["r_code"] = reward
        else:       # fallen: the scene zeroed its terms
            extra = dict.fromkeys(keys, 0.0)
        scene.reward_terms = {**scene.reward_terms, **extra}
        return reward

    scene.calc_reward = calc_reward
    return checks


def episode_figures(stats):
    out = []
    for s in stats:
        n = s.num_decisions
        fig = {"length_s": s.length_s, "fell": s.fell, "num_decisions": n}
        for v in VARIANTS:
            if v == "r_code":   # the scene's own rewards, as the agent's path holds them
                fig[v] = {"mean_per_decision": s.mean_reward, "normalized_return": s.episode_return / MAX_DECISIONS}
            else:               # the recorded per-decision means times the decisions
                mean = s.reward_terms[v]
                fig[v] = {"mean_per_decision": mean, "normalized_return": mean * n / MAX_DECISIONS}
        out.append(fig)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=2)
    parser.add_argument("--json", required=True)
    options, rest = parser.parse_known_args(argv)
    from app.build import load_world
    from app.evaluate import evaluate, summarize
    world = load_world(rest, enable_draw=False)
    try:
        checks = install(world.env)
        stats = evaluate(world, options.episodes)
    finally:
        world.shutdown()
    episodes = episode_figures(stats)
    summary = {v: {k: float(np.mean([e[v][k] for e in episodes])) for k in ("mean_per_decision", "normalized_return")}
               for v in VARIANTS}
    terms = {k: float(np.mean([s.reward_terms[k] for s in stats])) for k in stats[0].reward_terms
             if k not in VARIANTS}
    result = {
        "command": shlex.join([".venv/bin/python", "tests/bench/paper_returns.py", *(argv if argv is not None else sys.argv[1:])]),
        "max_decisions": MAX_DECISIONS,
        "paper_weights": PAPER_WEIGHTS,
        "reference_vs_itself": checks[0] if checks else None,
        "summary": summary,
        "term_means": terms,
        "evaluation_summary": summarize(stats),
        "episodes": episodes,
        "episode_stats": [asdict(s) for s in stats],
    }
    Path(options.json).parent.mkdir(parents=True, exist_ok=True)
    Path(options.json).write_text(json.dumps(result, indent=1) + "\n")
    for v in VARIANTS:
        print(f"{v}: {summary[v]['mean_per_decision']:.4f} per decision, normalized return {summary[v]['normalized_return']:.4f}")
    print("terms:", " ".join(f"{k} {v:.3f}" for k, v in terms.items()))
    print(f"written to {options.json}")


if __name__ == "__main__":
    main()
