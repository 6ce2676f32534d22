"""Where the server keeps the LLM endpoint configuration: out of reach of SQL roles.

PL/Python runs as the operating-system user of the server, in the data directory, so
a file there (mode 0600) can be read by the functions whatever role calls them, but
by no SQL role: ordinary roles cannot read server files. Only superusers can rewrite
it, through ``siselect.set_llm_config``. The server's environment
(``SISELECT_LLM_URL``, ``SISELECT_LLM_MODEL``, ``OPENAI_API_KEY``) fills what the file
leaves out, for deployments that configure services by environment.
"""

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

CONFIG_FILE = Path("siselect") / "llm.json"


def _path() -> Path:
    # The backend's working directory is the data directory; resolve it now so that a
    # later chdir by other code cannot redirect us.
    return Path(os.getcwd()) / CONFIG_FILE


def llm_config():
    """The configuration the server's LLM judge uses."""
    from siselect.selection.llm import LLMConfig

    config = LLMConfig.from_env(os.environ)
    hosts = config.allowed_hosts
    path = _path()
    if path.exists():
        config = config.merged(**json.loads(path.read_text()))
    if hosts:  # set in the server's environment, by whoever runs it: the file cannot widen it
        config = dataclasses.replace(config, allowed_hosts=hosts)
    return config


def write_llm_config(settings: dict[str, Any] | None) -> str:
    """Replace the file (None removes it); returns what was done, without secrets."""
    from siselect.runtime.errors import InvalidInput
    from siselect.selection.llm import LLMConfig

    path = _path()
    if settings is None:
        path.unlink(missing_ok=True)
        return "removed"
    if not isinstance(settings, dict):
        raise InvalidInput("the configuration must be a JSON object")
    LLMConfig().merged(**settings)  # validates field names and types
    path.parent.mkdir(mode=0o700, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(settings, f)
    tmp.replace(path)
    return "saved"


def public_view(config: Any) -> dict[str, Any]:
    """The settings as a dict with the API key masked and the URL's credentials redacted
    (the same secrets, spelled in the URL)."""
    from dataclasses import asdict

    from siselect.runtime.redact import redact_url

    view = asdict(config)
    if view.get("api_key"):
        view["api_key"] = "****"
    view["base_url"] = redact_url(view["base_url"])
    return view
