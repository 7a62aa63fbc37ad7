"""The shared vocabulary every family uses: platform, availability, topology, trace, the view's base,
metrics, seeding and the checks of input (a family's own workload and view live in its package)."""

from dlbkit.model.availability import Constant, Markov, Piecewise, Pulse, Recorded, Step
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.model.trace import Trace

__all__ = ["Constant", "Markov", "Piecewise", "Pulse", "Recorded", "Step", "Network", "Node", "Platform", "Trace"]
