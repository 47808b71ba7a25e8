"""An example function for worker.py: a stand-in for an agent, deterministic and offline.

    python3 examples/python/worker.py --url URL --api-key KEY --run RUN_ID \\
        examples/python/example_agent.py:run

`run(task)` gets the task as a dict (its `input`, `order`, `persona`, `tags`, `attempt`, the
iteration's `iteration_name` and `agent_code`, a `traceparent` for the spans it may send) and
answers a dict: `output`, and, on a run the service does not score, its own `score` (and any of
`passed`, `dimension_scores`, `cost`). Raise to report an error; answer
`{"status": "rate_limited"}` when a provider says "later".
"""


def run(task):
    question = task["input"].get("question", "") if isinstance(task["input"], dict) else str(task["input"])
    words = question.split()
    return {
        "output": {"answer": " ".join(reversed(words)), "iteration": task["iteration_name"]},
        "score": min(1.0, len(words) / 10),
        "passed": bool(words),
        "dimension_scores": {"words": float(len(words))},
    }
