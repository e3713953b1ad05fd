"""What Inspect loads through the `inspect_ai` entry point: every trompe task, solver and scorer, registered
(a task per registered benchmark: tasks.BENCHMARK_TASKS)."""

from .function_model import FunctionModel
from .scorers import answer, benchmark
from .sevex import sevex_prompt
from .solvers import illusion_agent, no_tools
from .tasks import BENCHMARK_TASKS
from .tools import tool_loop

__all__ = ["BENCHMARK_TASKS", "FunctionModel", "answer", "benchmark", "illusion_agent", "no_tools", "sevex_prompt",
           "tool_loop"]
