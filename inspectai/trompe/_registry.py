"""What Inspect loads through the `inspect_ai` entry point: every trompe task, solver and scorer, registered."""

from .function_model import FunctionModel
from .scorers import answer, benchmark
from .sevex import sevex_prompt
from .solvers import illusion_agent, no_tools
from .tasks import blindtest, blink, datacv_task1, datacv_task2, hallusionbench, illusionvqa, probes, vstar
from .tools import tool_loop

__all__ = ["FunctionModel", "answer", "benchmark", "blindtest", "blink", "datacv_task1", "datacv_task2",
           "hallusionbench", "illusion_agent", "illusionvqa", "no_tools", "probes", "sevex_prompt", "tool_loop",
           "vstar"]
