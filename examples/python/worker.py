#!/usr/bin/env python3
"""A worker for the Overmind evaluation service, in Python's standard library alone.

It speaks the same protocol as `overmind-eval-service worker` (docs/API.md, "Workers"): it
registers, leases tasks up to its concurrency, runs each with your function in a thread pool,
heartbeats in the background while it holds leases, sends every result (keeping it, and trying
again with backoff, until the service accepts or refuses it; the lease for the threads its results
free goes with them, one call for both) and says goodbye.

    python3 examples/python/worker.py --url http://127.0.0.1:8000 --api-key KEY \\
        --run RUN_ID examples/python/example_agent.py:run

FUNCTION is `module:function` (an importable module), `path/to/file.py:function`, or
`path/to/file.py` (its function `run`). It is called as `run(task) -> dict` with the task as a
dict: task_id, run_id, iteration_id, iteration_name, datapoint_id, order, input, persona, tags,
attempt, try, agent_code, traceparent. It answers a dict with `output` and any of `score`,
`passed`, `dimension_scores`, `cost` (or `{"status": "error", "error": "..."}`, or
`{"status": "rate_limited"}` to have the task tried again later without using a try); anything
else it returns is the output; an exception is an error result with the end of its traceback.

SIGINT or SIGTERM: no more leases, running tasks get --grace seconds to finish, their results are
sent, the rest are given back with the goodbye, exit 0. A second signal exits at once. With
--run, the worker exits 0 once the run has ended. Python cannot stop a thread: a task the service
takes back (a cancelled run) runs to its end and its result is dropped.
"""

import argparse
import concurrent.futures
import datetime
import importlib
import importlib.util
import json
import os
import random
import signal
import socket
import sys
import threading
import time
import traceback
import urllib.error
import urllib.request

RETRYABLE = {408, 429, 500, 502, 503, 504}
BACKOFF_BASE_S = 0.1
BACKOFF_MAX_S = 10.0
ERROR_CHARS_MAX = 16384
ITEMS_PER_COMPLETION_MAX = 1000
# Bytes of one completion's body, well under the service's (32 MiB by default), as the TypeScript worker.
COMPLETION_BYTES_MAX = 8 * 1024 * 1024
SCORE_FIELDS = ("score", "passed", "dimension_scores")
RESULT_FIELDS = ("output", "score", "passed", "dimension_scores", "cost", "status", "error", "trace_id", "span_id", "latency_ms")
ENDED = {"completed", "cancelled", "failed"}


def completion_chunk(unsent):
    """How many of the first results go in one completion: at most ITEMS_PER_COMPLETION_MAX and
    COMPLETION_BYTES_MAX of JSON, and always at least one."""
    total = 0
    for count, one in enumerate(unsent[:ITEMS_PER_COMPLETION_MAX]):
        total += len(json.dumps(one["item"]).encode()) + 1
        if count > 0 and total > COMPLETION_BYTES_MAX:
            return count
    return min(len(unsent), ITEMS_PER_COMPLETION_MAX)


def log(message):
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    print(f"{stamp} {message}", file=sys.stderr, flush=True)


class Refused(Exception):
    """The service answered, and not with what was asked: final, not worth repeating."""

    def __init__(self, status, body, what):
        super().__init__(f"{what}: the service answered {status} {json.dumps(body)}")
        self.status = status
        self.body = body


class Stopped(Exception):
    """A call given up because the worker is stopping."""


class Service:
    """The HTTP calls, each tried again with backoff while the service cannot answer."""

    def __init__(self, url, api_key):
        self.base = url.rstrip("/")
        self.api_key = api_key
        self.unreachable_since = None
        self.logged_at = 0.0

    def call(self, method, path, body, expected, what, give_up=None, timeout=70.0, sent=None):
        """`give_up`: a threading.Event that, once set, ends the retries with Stopped; `sent` hears of each failed try."""
        data = None if body is None else json.dumps(body).encode()
        attempt = 0
        while True:
            if give_up is not None and give_up.is_set():
                raise Stopped()
            request = urllib.request.Request(self.base + path, data=data, method=method)
            request.add_header("X-Api-Key", self.api_key)
            request.add_header("Content-Type", "application/json")
            try:
                with urllib.request.urlopen(request, timeout=timeout) as response:
                    status, text = response.status, response.read().decode()
            except urllib.error.HTTPError as error:
                status, text = error.code, error.read().decode()
            except (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError) as error:
                status, text = None, str(getattr(error, "reason", error))
                if sent is not None:
                    sent(error)
            if status is not None and status not in RETRYABLE:
                self.reached()
                parsed = json.loads(text) if text else None
                if status != expected and not (method == "DELETE" and status == 404):
                    raise Refused(status, parsed, what)
                return parsed
            delay = min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2 ** min(attempt, 30))
            delay = delay / 2 + random.random() * delay / 2
            self.unreachable(f"{method} {path}: {status or text}", delay)
            attempt += 1
            if give_up is not None:
                if give_up.wait(delay):
                    raise Stopped()
            else:
                time.sleep(delay)

    def reached(self):
        if self.unreachable_since is not None:
            log(f"the service answers again (after {time.monotonic() - self.unreachable_since:.1f} s)")
            self.unreachable_since = None

    def unreachable(self, failure, delay):
        now = time.monotonic()
        if self.unreachable_since is None:
            self.unreachable_since = now
        if now - self.logged_at >= 10:
            self.logged_at = now
            log(f"the service cannot answer now ({failure}); trying again in {delay:.1f} s, keeping every result until it is taken")


def fit_error(text):
    return text if len(text) <= ERROR_CHARS_MAX else "…" + text[-(ERROR_CHARS_MAX - 1):]


def last_line(text):
    """The last line of an error (a traceback's is the exception), for the log."""
    lines = text.splitlines()
    return lines[-1] if lines else ""


def fresh_traceparent():
    trace_id, span_id = os.urandom(16).hex(), os.urandom(8).hex()
    return trace_id, span_id, f"00-{trace_id}-{span_id}-01"


def seconds_until(iso):
    at = datetime.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return at.timestamp() - time.time()


def task_for_function(task, traceparent):
    datapoint, iteration = task["datapoint"], task["iteration"]
    return {
        "task_id": task["id"], "run_id": task["run"],
        "iteration_id": iteration["id"], "iteration_name": iteration["iteration_name"],
        "datapoint_id": datapoint["id"], "order": datapoint["order"], "input": datapoint["input"],
        "persona": datapoint["persona"], "tags": datapoint["tags"],
        "attempt": task["attempt"], "try": task["try"],
        "agent_code": iteration["agent_code"], "traceparent": traceparent,
    }


def item_of(task, answer, latency_ms, trace_id, span_id):
    """A completion item from what the function answered."""
    base = {"task": task["id"], "lease": task["lease"]}
    if not isinstance(answer, dict):
        answer = {"output": answer}
    if answer.get("status") == "rate_limited":
        return {**base, "status": "rate_limited"}
    item = {**base, "latency_ms": latency_ms, "trace_id": trace_id, "span_id": span_id}
    item.update({field: answer[field] for field in RESULT_FIELDS if field in answer})
    return item


def after_refusal(item, errors, refusals):
    """What to send after the service refused an item as invalid, or None (see worker-decisions.ts)."""
    named = list(errors) if isinstance(errors, dict) else []
    if refusals >= 1 or item.get("status") == "rate_limited" or "task" in named or "lease" in named:
        return None
    error = fit_error("the service refused this result: " + json.dumps(errors))
    kept = {field: item[field] for field in ("output", "trace_id", "span_id", "latency_ms", "cost") if field in item and field not in named}
    return {"task": item["task"], "lease": item["lease"], "status": "error", "error": error, **kept}


class Worker:
    def __init__(self, service, function, run, concurrency, batch, grace, name):
        self.service, self.function, self.run = service, function, run
        self.concurrency, self.batch, self.grace, self.name = concurrency, batch, grace, name
        self.lock = threading.Condition()
        self.held = {}          # task id -> {"task", "lease_s", "stopped"}
        self.unsent = []        # [{"item", "refusals", "lease_s"}]
        self.sending = []
        self.stopping = threading.Event()
        self.finished = threading.Event()
        self.counts = {"done": 0, "errors": 0, "rate_limited": 0, "stale": 0, "cancelled": 0, "refused": 0, "stopped": 0}
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="task")
        self.worker_id = None
        self.ending = "stopped"
        self.check_leases = False
        self.leasing = False    # a lease of the lease loop's own is waiting for its answer
        self.riding = False     # a completion on its way carries the next lease ("next")
        self.failure = None

    # ---- the whole life ----

    def work(self):
        identity = {"name": self.name, "host": socket.gethostname(), "metadata": {"kind": "python", "concurrency": self.concurrency}}
        self.identity = identity
        self.worker_id = self.service.call("POST", "/api/workers/", identity, 201, "registering the worker", self.stopping)["id"]
        log(f"registered as worker {self.worker_id}; working on {'run ' + self.run if self.run else 'every run of the project'}, {self.concurrency} at once")
        threads = [threading.Thread(target=self.guarded(target), daemon=True) for target in (self.send_loop, self.heartbeat_loop, self.progress_loop, self.lease_loop)]
        for thread in threads:
            thread.start()
        # The main thread waits (and hears signals) while the others work; a lease waiting for
        # tasks at a stop is left behind: what it brings goes back with the goodbye.
        while not self.stopping.wait(0.5):
            pass
        self.wait_for_tasks()
        with self.lock:
            self.finished.set()
            self.lock.notify_all()
        threads[0].join(timeout=max(10.0, self.grace))
        self.service.call("DELETE", f"/api/workers/{self.worker_id}/", None, 204, "saying goodbye", give_up_after(5.0))
        log(f"{'the run has ended' if self.ending == 'run ended' else 'stopped'}: said goodbye; {json.dumps(self.counts)}")

    def guarded(self, loop):
        def run():
            try:
                loop()
            except Stopped:
                pass
            except Refused as error:
                self.failure = self.failure or error
                log(f"stopping: {error}")
                self.stop()
        return run

    def stop(self):
        self.stopping.set()
        with self.lock:
            self.lock.notify_all()

    # ---- leasing ----

    def lease_loop(self):
        wait_ms = 2000 if self.run else 10000
        while not self.stopping.is_set():
            if self.check_leases:
                self.look_for_lost_leases()
            with self.lock:
                free = min(self.batch, self.concurrency - len(self.held))
                # Results about to go out (or on their way) carry the next lease: one call for both.
                rides = self.riding or (self.unsent and not self.sending)
                if free <= 0 or rides or len(self.unsent) + len(self.sending) >= self.concurrency + self.batch:
                    self.lock.wait(1.0)
                    continue
                self.leasing = True
            try:
                answer = self.service.call("POST", f"/api/workers/{self.worker_id}/lease/", {"max": free, "wait_ms": wait_ms, "run": self.run}, 200, "leasing tasks", self.stopping, timeout=wait_ms / 1000 + 60, sent=self.lease_may_be_lost)
            finally:
                self.leasing = False
            if self.stopping.is_set():
                return  # what it brought goes back with the goodbye
            if not answer["tasks"]:
                self.look_at_run()
                continue
            self.admit(answer["tasks"])

    def admit(self, tasks):
        """Leased tasks (a lease's, or a completion's next): held, and run as threads free."""
        for task in tasks:
            # The lease's length as seen from here (a run's lease_seconds is at least 1).
            lease_s = max(1.0, seconds_until(task["lease_expires_at"]))
            with self.lock:
                self.held[task["id"]] = {"task": task, "lease_s": lease_s, "stopped": False}
            self.pool.submit(self.run_task, task)

    def lease_may_be_lost(self, error):
        """A lease that failed after it was sent may have leased tasks whose answer never came."""
        if not isinstance(getattr(error, "reason", error), ConnectionRefusedError):
            self.check_leases = True

    def look_at_run(self):
        if not self.run or self.stopping.is_set():
            return
        try:
            state = self.service.call("GET", f"/api/runs/{self.run}/", None, 200, "reading the run", self.stopping)
        except Stopped:
            return
        if state["status"] in ENDED:
            self.ending = "run ended"
            self.stop()

    def look_for_lost_leases(self):
        """A lease's answer may have been lost: with nothing held, the service should hold nothing for this worker."""
        self.check_leases = False
        with self.lock:
            while (self.held or self.unsent or self.sending) and not self.stopping.is_set():
                self.lock.wait(1.0)
        answer = self.service.call("POST", f"/api/workers/{self.worker_id}/heartbeat/", {"tasks": []}, 200, "heartbeat", self.stopping)
        if answer["leases"] > 0:
            log(f"the service holds {answer['leases']} leases whose answer was lost: registering again to give them back")
            self.service.call("DELETE", f"/api/workers/{self.worker_id}/", None, 204, "saying goodbye", self.stopping)
            self.worker_id = self.service.call("POST", "/api/workers/", self.identity, 201, "registering the worker", self.stopping)["id"]

    # ---- running ----

    def run_task(self, task):
        with self.lock:
            held = self.held.get(task["id"])
            if held is None or held["stopped"]:
                self.held.pop(task["id"], None)
                self.lock.notify_all()
                return
        if seconds_until(task["lease_expires_at"]) <= 0 and not self.still_mine(task["id"]):
            self.drop(task["id"])  # its lease ran out before it started, and went to another worker
            return
        trace_id, span_id, traceparent = fresh_traceparent()
        started = time.monotonic()
        try:
            answer = self.function(task_for_function(task, traceparent))
        except Exception:
            answer = {"status": "error", "error": fit_error(traceback.format_exc().rstrip())}
        item = item_of(task, answer, (time.monotonic() - started) * 1000, trace_id, span_id)
        if item.get("status") == "error":
            log(f"task {task['id']} (datapoint {task['datapoint']['order']}, try {task['try']}): {last_line(str(item.get('error', '')))}")
        with self.lock:
            held = self.held.pop(task["id"], None)
            if held is None:
                pass  # given up at a stop's end, and counted then
            elif held["stopped"]:
                self.counts["stopped"] += 1
            else:
                if task["scored_by_service"]:  # the service scores its run, and refuses scores of the function's own
                    item = {key: value for key, value in item.items() if key not in SCORE_FIELDS}
                self.unsent.append({"item": item, "refusals": 0, "lease_s": held["lease_s"]})
            self.lock.notify_all()

    def still_mine(self, task_id):
        answer = self.service.call("POST", f"/api/workers/{self.worker_id}/heartbeat/", {"tasks": [task_id]}, 200, "heartbeat")
        return task_id not in answer["stop"]

    def drop(self, task_id):
        with self.lock:
            self.held.pop(task_id, None)
            self.counts["stopped"] += 1
            self.lock.notify_all()

    def wait_for_tasks(self):
        deadline = time.monotonic() + self.grace
        with self.lock:
            while self.held and time.monotonic() < deadline:
                self.lock.wait(min(1.0, max(0.01, deadline - time.monotonic())))
            for held in self.held.values():
                held["stopped"] = True  # their leases go back with the goodbye
            self.counts["stopped"] += len(self.held)
            self.held.clear()
        self.pool.shutdown(wait=False, cancel_futures=True)

    # ---- sending results ----

    def send_loop(self):
        while True:
            with self.lock:
                while not self.unsent and not self.finished.is_set():
                    self.lock.wait()
                if not self.unsent:
                    return
                count = completion_chunk(self.unsent)
                self.sending, self.unsent = self.unsent[:count], self.unsent[count:]
                # The next lease rides along when there is room and nothing else is leasing; it
                # does not wait, so results are never held back.
                free = min(self.batch, self.concurrency - len(self.held))
                self.riding = free > 0 and not self.leasing and not self.check_leases and not self.stopping.is_set() and len(self.unsent) < self.concurrency + self.batch
            sent, riding = self.sending, self.riding
            body = {"results": [one["item"] for one in sent]}
            if riding:
                body["next"] = {"max": free, "wait_ms": 0, "run": self.run}
            try:
                answer = self.service.call("POST", f"/api/workers/{self.worker_id}/complete/", body, 200, "completing tasks", sent=self.lease_may_be_lost if riding else None)
            finally:
                self.riding = False
            with self.lock:
                self.sending = []
                for one, result in zip(sent, answer["results"]):
                    self.settle(one, result)
                self.lock.notify_all()
            if answer.get("tasks") and not self.stopping.is_set():
                self.admit(answer["tasks"])
            with self.lock:
                idle = not self.held and not self.unsent
            if idle:
                self.look_at_run()

    def settle(self, one, result):
        outcome, item = result["outcome"], one["item"]
        if outcome == "accepted":
            key = {"rate_limited": "rate_limited", "error": "errors"}.get(item.get("status"), "done")
            self.counts[key] += 1
        elif outcome in ("stale", "cancelled"):
            self.counts[outcome] += 1
        else:
            again = after_refusal(item, result.get("errors"), one["refusals"])
            if again is None:
                self.counts["refused"] += 1
                log(f"task {item['task']}: the service refused its result ({json.dumps(result.get('errors'))})")
                return
            log(f"task {item['task']}: the service refused its result ({json.dumps(result.get('errors'))}); sending an error result saying why")
            self.unsent.insert(0, {**one, "item": again, "refusals": one["refusals"] + 1})

    # ---- heartbeats and progress ----

    def heartbeat_loop(self):
        while not self.finished.is_set():
            with self.lock:
                leases = [held["lease_s"] for held in self.held.values()] + [one["lease_s"] for one in self.unsent + self.sending]
                named = list(self.held) + [one["item"]["task"] for one in self.unsent + self.sending]
            period = min(20.0, max(0.05, min(leases) / 3)) if leases else 1.0
            if self.finished.wait(period) or not named:
                continue
            answer = self.service.call("POST", f"/api/workers/{self.worker_id}/heartbeat/", {"tasks": named}, 200, "heartbeat", self.finished)
            stop = set(answer["stop"])
            with self.lock:
                for task_id in stop:
                    if task_id in self.held:
                        self.held[task_id]["stopped"] = True  # still running: its result will be dropped
                before = len(self.unsent)
                self.unsent = [one for one in self.unsent if one["item"]["task"] not in stop]
                self.counts["stopped"] += before - len(self.unsent)

    def progress_loop(self):
        while not self.finished.wait(10.0):
            with self.lock:
                log(f"{self.counts['done'] + self.counts['errors']} tasks done, {self.counts['errors']} errors, {len(self.held)} running")


def give_up_after(seconds):
    event = threading.Event()
    timer = threading.Timer(seconds, event.set)
    timer.daemon = True
    timer.start()
    return event


def load_function(spec):
    """`module:function`, `path/to/file.py:function` or `path/to/file.py` (its `run`)."""
    target, _, name = spec.rpartition(":") if ":" in spec else (spec, ":", "run")
    if target.endswith(".py") or os.sep in target:
        module_spec = importlib.util.spec_from_file_location("overmind_user_function", target)
        if module_spec is None or module_spec.loader is None:
            raise SystemExit(f"worker.py: cannot load {target}")
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(target)
    function = getattr(module, name or "run", None)
    if not callable(function):
        raise SystemExit(f"worker.py: {spec} names no function")
    return function


def main(argv=None):
    parser = argparse.ArgumentParser(description="Run an evaluation service's tasks with a Python function.")
    parser.add_argument("--url", default=os.environ.get("OVERMIND_URL"), help="the service's address (env OVERMIND_URL)")
    parser.add_argument("--api-key", default=os.environ.get("OVERMIND_API_KEY"), help="an API key of the project (env OVERMIND_API_KEY)")
    parser.add_argument("--run", help="only this run's tasks; exit 0 once it has ended")
    parser.add_argument("--concurrency", type=int, default=4, help="tasks at once (default 4)")
    parser.add_argument("--batch", type=int, help="tasks per lease (default: the concurrency)")
    parser.add_argument("--grace", type=float, default=30.0, help="seconds running tasks get at a stop (default 30)")
    parser.add_argument("--name", default=f"{socket.gethostname()}-py-{os.getpid()}", help="the worker's name")
    parser.add_argument("function", help="module:function, path/to/file.py:function, or path/to/file.py (its run)")
    args = parser.parse_args(argv)
    if not args.url or not args.api_key:
        parser.error("--url and --api-key are required (or OVERMIND_URL and OVERMIND_API_KEY)")
    if not 1 <= args.concurrency <= 1000 or not 1 <= (args.batch or args.concurrency) <= 1000:
        parser.error("--concurrency and --batch must be from 1 to 1000")
    function = load_function(args.function)
    worker = Worker(Service(args.url, args.api_key), function, args.run, args.concurrency, args.batch or args.concurrency, args.grace, args.name)
    signals = []

    def on_signal(number, _frame):
        if signals:
            os._exit(128 + number)
        signals.append(number)
        log(f"{signal.Signals(number).name}: leasing no more; running tasks get {args.grace:g} s to finish (again to stop at once)")
        worker.stop()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        worker.work()
    except (Refused, Stopped) as error:
        worker.failure = worker.failure or error
    if worker.failure is not None:
        log(f"the worker stopped: {worker.failure}")
        sys.stderr.flush()
        os._exit(1)
    sys.stdout.flush()
    sys.stderr.flush()
    # Threads still running a task (a stop's grace ran out) cannot be stopped: leave without them.
    os._exit(0)


if __name__ == "__main__":
    main()
