"""One warning line per topic and process, to stderr: `warning: <topic>: <message>`."""
import sys

_warned = set()      # the topics warned about in this process


def warn_once(topic, message):
    """Prints `warning: topic: message` to stderr unless this process has warned about `topic`."""
    if topic not in _warned:
        _warned.add(topic)
        print(f"warning: {topic}: {message}", file=sys.stderr, flush=True)
