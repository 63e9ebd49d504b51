"""Export a trained policy for use outside the project:

    python scripts/export_policy.py SOURCE -o policy.onnx [--format onnx|npz] [--with_logstd]

SOURCE is a training run's output directory (args.txt, agent0_model.ckpt) or an argument file
whose --model_files names the checkpoint. The file maps DeepMimic's raw state (and goal) to the raw
action, the normalisers folded in (app/policy_export.py); .onnx runs in onnxruntime, .npz
with numpy alone (util/npz_policy.py). Formats and metadata: learning/policy_files.py.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from util.cli import configure_process_env, run_main  # noqa: E402

configure_process_env()

from app.policy_export import export_policy  # noqa: E402
from learning.policy_files import FORMATS, format_of, write_policy  # noqa: E402

PROG = "export_policy.py"


def main(argv=None):
    parser = argparse.ArgumentParser(prog=PROG, description="export a trained policy as ONNX or numpy .npz")
    parser.add_argument("source", help="a training output directory or an argument file with --model_files")
    parser.add_argument("-o", "--output", required=True, help="the file to write (.onnx or .npz)")
    parser.add_argument("--format", choices=FORMATS, help="default: from the output's suffix")
    parser.add_argument("--with_logstd", action="store_true",
                        help="also output the exploration Gaussian's log-std (raw action units)")
    args = parser.parse_args(argv)
    fmt = format_of(args.output, args.format)
    graph, meta = export_policy(args.source, args.with_logstd)
    write_policy(args.output, graph, meta, fmt)
    print(f"{args.output}: {fmt} policy of the {meta['agent_type']} agent ({meta['actor_net']}): state "
          f"{meta['state_size']}, goal {meta['goal_size']} -> action {meta['action_size']}, layout {meta['layout']}"
          + (", relative to the reference pose" if meta["action_relative_to_reference"] else ""))


if __name__ == "__main__":
    sys.exit(run_main(main, PROG))
