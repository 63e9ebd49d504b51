"""Building a world: the env the args describe and its RLWorld (DeepMimic's build_world).

With --rand_seed, numpy, random, TF and the scene are seeded with rand_seed + 1000 * rank (ranks
must not share episodes); TF runs one thread per rank.
"""
from env.deepmimic_env import DeepMimicEnv
from learning.agents.exported_policy_agent import use_exported_policy
from learning.rl_world import RLWorld
from learning.tf_util import limit_tf_threads, seed_rank
from util.arg_parser import load_args
from util.entry_keys import warn_unused_args


def build_world(arg_parser, enable_draw=False):
    """DeepMimicEnv(arg_parser, enable_draw) and its RLWorld."""
    limit_tf_threads()
    seed = seed_rank(arg_parser.parse_int("rand_seed", at_least=0)) if arg_parser.has_key("rand_seed") else None
    return RLWorld(DeepMimicEnv(arg_parser, enable_draw, seed=seed), arg_parser)


def load_world(argv, enable_draw=True):
    """A fresh world from a command line (re-reading the arg files, as the viewer's `l` key
    wants); warns about arguments nobody reads. With --policy_file, agent 0 acts with that
    exported policy and no checkpoint is loaded."""
    args = load_args(argv)
    policy_file = args.parse_string("policy_file")
    if policy_file:
        args.set("model_files", ["none"] * len(args.parse_strings("agent_files")))
    world = build_world(args, enable_draw)
    if policy_file:
        use_exported_policy(world, policy_file)
    warn_unused_args(args)
    return world
