"""The optional LLM path: ask an OpenAI-compatible server to classify an issue, then refine the
offline triage with the answer. The only module that imports ``openai``.

Any server that speaks the chat-completions API works by configuration (OpenAI, Azure, vLLM,
llama.cpp server, Ollama). The LLM is an advisor, never a dependency: every failure (no budget,
timeout, 429/5xx after two retries, unparsable or inconsistent answer) ends in the offline triage
with a note and one log line, and the job goes on (RELIABILITY 31, 37).

``openai`` is a heavy package (about half a second to import, most of a CLI command's start-up),
so it is imported inside the functions that talk to the server, never at import: ``triagebot
--help``, offline commands and a receiver-only process never load it.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from triagebot.domain.models import Issue, Similar, Triage
from triagebot.llm import answer as llm_answer
from triagebot.llm import combine
from triagebot.llm import prompt as llm_prompt
from triagebot.llm import summary as llm_summary
from triagebot.llm.store import (
    AnswerCache,
    AnswerStore,
    Budget,
    CallBudget,
    Clock,
    DbAnswerCache,
    DbBudget,
    LLMStats,
    StatsRecorder,
    cache_key,
)
from triagebot.settings import LLMConfigError, LLMSettings, Settings

if TYPE_CHECKING:  # annotations only; the runtime import is in the functions below
    import openai
    from openai.types.chat import ChatCompletionMessageParam

    from triagebot.store.db import Database

__all__ = ["LLMClassifier", "LLMConfigError", "LLMFailure", "LLMSettings", "build_refiner", "refiner_for"]

log = logging.getLogger("triagebot.llm.client")

MAX_RETRIES = 2
BACKOFF_S = 0.5
FORMATS = ("json_schema", "json_object", "plain")


class LLMFailure(Exception):
    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason, self.detail = reason, detail


class LLMClassifier:
    """Classifies issues through the configured server and implements the ``Refiner`` protocol."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        thresholds: Mapping[str, float] | None = None,
        budget_clock: Clock | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.settings = settings
        self.thresholds = dict(thresholds or {})
        self._templates = _load_templates(settings)
        self._cache: AnswerStore = AnswerCache(settings.cache_path)
        self._budget_clock = budget_clock
        self._budget: CallBudget = Budget(settings.calls_per_hour, budget_clock or time.monotonic)
        self._stats = StatsRecorder()
        self._sleep = sleep
        self._format = FORMATS[0]
        import openai  # heavy: see the module docstring

        key = settings.api_key.get_secret_value() if settings.api_key else "not-needed"
        self._client = openai.OpenAI(
            api_key=key, base_url=settings.base_url, timeout=settings.timeout, max_retries=0
        )

    def stats(self) -> LLMStats:
        return self._stats.snapshot()

    def keep_state_in(self, db: Database) -> None:
        """Keep the hourly budget, and the answers unless ``TRIAGEBOT_LLM_CACHE`` names a file
        for them, in the service's database: every worker process on every machine then shares
        one cache and one budget per installation (``llm.store.DbBudget``). Called once by the
        service's wiring, before any job."""
        if not self.settings.cache_path:
            self._cache.close()
            self._cache = DbAnswerCache(db)
        self._budget = DbBudget(db, self.settings.calls_per_hour, self._budget_clock or time.time)

    def close(self) -> None:
        self._client.close()
        self._cache.close()

    def refine(self, issue: Issue, offline: Triage, neighbours: list[Similar]) -> Triage:
        """Offline triage sharpened by the LLM, or ``offline`` plus a note; never raises."""
        try:
            prompt, answer = self.classify(issue, offline, neighbours)
            refined = combine.combine(offline, answer, issue_text=prompt.issue_text,
                                      neighbours=neighbours, thresholds=self.thresholds)
        except LLMFailure as failure:
            return self._fallback(issue, offline, failure.reason, failure.detail)
        except Exception as exc:  # noqa: BLE001 - the refiner must never take the job down
            log.exception("llm refine failed unexpectedly")
            return self._fallback(issue, offline, "unexpected", type(exc).__name__)
        self._stats.count("refined")
        return refined

    def _fallback(self, issue: Issue, offline: Triage, reason: str, detail: str) -> Triage:
        self._stats.fallback(reason)
        log.warning("llm fallback to offline for %s#%s: %s %s", issue.repo, issue.number,
                    reason, detail)
        note = f"llm: fell back to offline triage ({reason}{': ' + detail if detail else ''})"
        return offline.model_copy(update={"notes": offline.notes + [note]})

    def forget(self, repos: list[str]) -> int:
        """Delete cached answers about these repositories (their installation is gone)."""
        return self._cache.forget(repos)

    def summarize_resolution(self, issue_title: str, discussion: str, repo: str = "") -> str | None:
        """One sanitised sentence on how a closed issue was resolved, or None (any failure, an
        unsafe answer): ``index sync`` then keeps its offline extract. Never raises. ``repo``
        scopes the cached answer, so an uninstall can delete it."""
        try:
            prompt = llm_summary.build(self.settings.prompts_dir, issue_title, discussion,
                                       self.settings.secret_values)
            key = cache_key(self.settings.model, prompt.version, prompt.system, prompt.user)
            content = self._cache.get(key)
            if content is None and not self._budget.take("resolution-summary"):
                raise LLMFailure("budget", f"{self.settings.calls_per_hour} calls/hour used")
            if content is None:
                content = self._ask(prompt.messages(), time.monotonic() + self.settings.timeout, True)
                self._cache.put(key, content or "", scope=repo)
            return llm_summary.sanitised(content, self.settings.secret_values)
        except Exception as exc:  # noqa: BLE001 - a summary is optional; the sync must go on
            self._stats.fallback(getattr(exc, "reason", "unexpected"))
            log.warning("llm resolution summary failed (%s); keeping the offline extract", exc)
            return None

    def classify(
        self, issue: Issue, offline: Triage, neighbours: list[Similar]
    ) -> tuple[llm_prompt.Prompt, llm_answer.AnswerFields]:
        """The validated answer for ``issue``; raises ``LLMFailure`` with a stable reason."""
        prompt = llm_prompt.build(self._templates, issue, offline, neighbours,
                                  self.settings.secret_values)
        key = cache_key(self.settings.model, prompt.version, prompt.system, prompt.user)
        cached = self._cache.get(key)
        if cached is not None:
            self._stats.count("cache_hits")
            return prompt, self._validated(cached, neighbours, issue)
        if not self._budget.take(issue.repo.split("/")[0] or "default"):
            raise LLMFailure("budget", f"{self.settings.calls_per_hour} calls/hour used")
        deadline = time.monotonic() + self.settings.timeout
        answer = self._answer(prompt, neighbours, issue, deadline)
        self._cache.put(key, answer.model_dump_json(), scope=issue.repo)
        return prompt, answer

    def _answer(self, prompt: llm_prompt.Prompt, neighbours: list[Similar], issue: Issue,
                deadline: float) -> llm_answer.AnswerFields:
        """One request plus at most one repair turn when the reply is not JSON at all."""
        messages = prompt.messages()
        content = self._ask(messages, deadline)
        try:
            return self._validated(content, neighbours, issue)
        except LLMFailure as failure:
            if failure.reason != "invalid_json":
                raise
            log.info("llm reply was not JSON (%s); asking once for a repair", failure.detail)
            repair = llm_prompt.repair_message(self._templates, failure.detail)
            messages += [{"role": "assistant", "content": content or ""},
                         {"role": "user", "content": repair}]
            return self._validated(self._ask(messages, deadline), neighbours, issue)

    @staticmethod
    def _validated(content: str | None, neighbours: list[Similar], issue: Issue) -> llm_answer.AnswerFields:
        try:
            answer = llm_answer.parse(content)
            llm_answer.check(answer, neighbours, issue.number)
        except llm_answer.InvalidAnswer as bad:
            raise LLMFailure(bad.reason, bad.detail) from None
        return answer

    def _ask(self, messages: list[dict[str, str]], deadline: float, plain: bool = False) -> str | None:
        """Send once, degrading the output format on 400 and retrying 429/5xx within the deadline."""
        import openai  # heavy: see the module docstring

        retries = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0.05:
                raise LLMFailure("timeout", "no time left for another attempt")
            try:
                return self._request(messages, remaining, plain)
            except openai.APITimeoutError:
                raise LLMFailure("timeout", f"no answer within {self.settings.timeout:g}s") from None
            except openai.BadRequestError as exc:
                if plain or self._format == FORMATS[-1]:
                    raise LLMFailure("bad_request", f"HTTP 400 in {self._format} mode") from None
                self._degrade_format(exc)
            except (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError) as exc:
                retries += 1
                self._wait_or_fail(exc, retries, deadline)
            except openai.APIStatusError as exc:
                raise LLMFailure(f"http_{exc.status_code}", "server refused the request") from None

    def _degrade_format(self, exc: openai.BadRequestError) -> None:
        """Servers without structured output reject ``response_format``: try the next format."""
        old = self._format
        self._format = FORMATS[FORMATS.index(old) + 1]
        log.info("llm server rejected response_format %s (HTTP 400); using %s", old, self._format)

    def _wait_or_fail(self, exc: Exception, retries: int, deadline: float) -> None:
        reason = _reason(exc)
        if retries > MAX_RETRIES:
            raise LLMFailure(reason, f"still failing after {MAX_RETRIES} retries")
        wait = _retry_after(exc)
        wait = BACKOFF_S * 2 ** (retries - 1) if wait is None else wait
        if time.monotonic() + wait >= deadline:
            limit = self.settings.timeout
            raise LLMFailure(reason, f"retry in {wait:g}s would pass the {limit:g}s timeout")
        log.info("llm %s; retry %d/%d in %.2fs", reason, retries, MAX_RETRIES, wait)
        self._sleep(wait)

    def _request(self, messages: list[dict[str, str]], timeout: float, plain: bool = False) -> str | None:
        started = time.perf_counter()
        usage = None
        try:
            response = self._client.chat.completions.create(
                model=self.settings.model, messages=[_wire(m) for m in messages], temperature=0,
                max_tokens=self.settings.max_tokens, timeout=timeout, **self._format_kwargs(plain),
            )
            usage = response.usage
            return response.choices[0].message.content if response.choices else None
        finally:
            tokens = (getattr(usage, "prompt_tokens", 0) or 0,
                      getattr(usage, "completion_tokens", 0) or 0)
            latency = time.perf_counter() - started
            self._stats.call(latency, *tokens)
            log.debug("llm call %s: %.0f ms, tokens in/out %d/%d", self._format, latency * 1000, *tokens)

    def _format_kwargs(self, plain: bool = False) -> dict[str, Any]:
        if self._format == "json_schema" and not plain:
            schema = {"name": "triage", "strict": True, "schema": llm_answer.json_schema()}
            return {"response_format": {"type": "json_schema", "json_schema": schema}}
        if self._format == "json_object" and not plain:  # plain: free text, e.g. summaries
            return {"response_format": {"type": "json_object"}}
        return {}


def _load_templates(settings: LLMSettings) -> llm_prompt.Templates:
    directory = llm_prompt.prompts_dir({"TRIAGEBOT_PROMPTS_DIR": settings.prompts_dir or ""})
    try:
        return llm_prompt.Templates.load(directory)
    except OSError as exc:
        raise LLMConfigError(f"TRIAGEBOT_PROMPTS_DIR: cannot read prompt templates ({exc})") from None


def _reason(exc: Exception) -> str:
    import openai  # heavy: see the module docstring

    if isinstance(exc, openai.RateLimitError):
        return "rate_limited"
    if isinstance(exc, openai.APIStatusError):
        return "server_error"
    return "connection"


def _retry_after(exc: Exception) -> float | None:
    """Seconds from ``Retry-After`` (or ``retry-after-ms``); None when absent or unparsable."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return max(float(headers[name]) * scale, 0.0)
        except (KeyError, TypeError, ValueError):
            continue
    return None


def refiner_for(settings: LLMSettings | None, **kwargs: Any) -> LLMClassifier | None:
    """The LLM refiner for the settings' LLM part, or None when no LLM is configured."""
    return LLMClassifier(settings, **kwargs) if settings else None


def build_refiner(env: Mapping[str, str], **kwargs: Any) -> LLMClassifier | None:
    """The refiner configured by ``env``, a mapping of variables as ``Settings.from_env`` reads
    them (tests and ``bench/`` pass one; the CLI and the service use ``refiner_for``)."""
    return refiner_for(Settings.from_env(env).llm, **kwargs)


def _wire(message: Mapping[str, str]) -> ChatCompletionMessageParam:
    """One chat turn in openai's typed shape: the prompt module builds plain role/content dicts
    because it must not import openai; this is where the two meet."""
    role, content = message["role"], message["content"]
    if role == "system":
        return {"role": "system", "content": content}
    if role == "assistant":
        return {"role": "assistant", "content": content}
    if role == "user":
        return {"role": "user", "content": content}
    raise ValueError(f"unknown chat role {role!r}")
