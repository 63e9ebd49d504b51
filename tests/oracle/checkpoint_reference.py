"""Loads checkpoints into the older DeepMimic port of the pybullet wheel (its TF1 PPO agent) and
evaluates them. Run in a process of its own (TF1 graph mode):

    python tests/oracle/checkpoint_reference.py IN.npz OUT.npz

IN.npz: `states` (n, 197) raw states; `checkpoints`: checkpoint prefixes (strings).
The first checkpoint goes through the port's own start-up path (testrl.build_arg_parser with the
wheel's run_humanoid3d_walk_args.txt and --model_files, then its PyBulletDeepMimicEnv and RLWorld,
which restore it with the agent's tf.train.Saver); the others through the same agent's
load_model. For checkpoint i OUT.npz holds `{i}/action` (the un-normalised mean action),
`{i}/norm_action` (the mean action in normalised units), `{i}/value` (the critic's value, through
val_norm) and the normalisers as restored: `{i}/{s_norm,g_norm,a_norm,val_norm}/{mean,std,count}`.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tests.oracle import wheel_port  # noqa: E402


def main(in_path, out_path):
    testrl = wheel_port.import_port()
    import pybullet_data
    from pybullet_envs.deep_mimic.env.pybullet_deep_mimic_env import PyBulletDeepMimicEnv
    from pybullet_envs.deep_mimic.learning.rl_world import RLWorld

    with np.load(in_path) as data:
        states = data["states"].astype(np.float32)
        prefixes = [str(p) for p in data["checkpoints"]]
    # the port's RLWorld loads data path + "/" + model file
    rel = os.path.relpath(os.path.abspath(prefixes[0]), pybullet_data.getDataPath())
    arg_parser = testrl.build_arg_parser(["--arg_file", "run_humanoid3d_walk_args.txt", "--model_files", rel])
    world = RLWorld(PyBulletDeepMimicEnv(arg_parser, False), arg_parser)
    agent = world.agents[0]
    out = {}
    for i, prefix in enumerate(prefixes):
        if i > 0:
            agent.load_model(prefix)
        with agent.sess.as_default(), agent.graph.as_default():
            action, norm_action, value = agent.sess.run(
                [agent.a_mean_tf, agent.a_norm.normalize_tf(agent.a_mean_tf), agent.critic_tf],
                feed_dict={agent.s_tf: states})
        out[f"{i}/action"], out[f"{i}/norm_action"], out[f"{i}/value"] = action, norm_action, value
        for name in ("s_norm", "g_norm", "a_norm", "val_norm"):
            norm = getattr(agent, name)
            out[f"{i}/{name}/mean"], out[f"{i}/{name}/std"] = np.asarray(norm.mean), np.asarray(norm.std)
            out[f"{i}/{name}/count"] = np.asarray(norm.count)
    np.savez(out_path, **out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
