"""The shapes of secrets, as secret scanners know them (gitleaks and trufflehog rule families), for redaction.

Each rule names what it finds, the family it belongs to, a pattern whose group ``secret`` is the part replaced
(the rest of the match is kept so the reader still sees *what* was there: ``ghp_<redacted>``,
``AccountKey=<redacted>``), an optional check on the match, and examples: strings that must be redacted.
tests/live/test_secrets.py runs every example through the redactor, and a corpus of GPU evidence (driver
versions, paths, PCI ids, UUIDs, Xid lines) that must come through unchanged.

knowledge/live.toml [redact] holds the site-tunable rules (secret key names, a few value patterns); these
are the fixed shapes. Both are applied to every string of every object and to every log and node file.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Callable

# Names that say "the value is a secret" when a value is assigned to them (env, flags, config text).
_SECRET_WORD = (r"(?:password|passwd|passphrase|pwd|secret|token|api[-_]?key|apikey|access[-_]?key|private[-_]?key"
                r"|secret[-_]?key|client[-_]?secret|credentials?|account[-_]?key|sharedaccesskey|auth[-_]?key)")
def _pem_private(m: re.Match) -> bool:
    """Base64 of a PEM block: redacted when the block is a private key (a certificate is not a secret)."""
    head = m.group("secret")[:96]
    head = head[: len(head) - len(head) % 4]
    try:
        return b"PRIVATE KEY" in base64.b64decode(head)
    except (binascii.Error, ValueError):
        return False


@dataclass(frozen=True)
class Rule:
    name: str
    family: str
    pattern: re.Pattern
    examples: tuple[str, ...]
    needles: tuple[str, ...]  # lower-case strings one of which any match holds: a text without them is skipped
    check: Callable[[re.Match], bool] | None = None


def _rule(name: str, family: str, pattern: str, examples: tuple[str, ...], check=None, *, needles: tuple[str, ...]) -> Rule:
    return Rule(name, family, re.compile(pattern), examples, needles, check)


def _env_name(m: re.Match) -> bool:
    """``_TOKEN`` ends an upper-case environment-style name (``GITLAB_TOKEN``), not a word in a sentence."""
    s, i = m.string, m.start()
    j = i
    while j > 0 and (s[j - 1].isupper() or s[j - 1].isdigit() or s[j - 1] == "_"):
        j -= 1
    return j < i and s[j].isupper() and (j == 0 or not (s[j - 1].isalnum() or s[j - 1] in ".-"))


_WORDS = ("pass", "pwd", "secret", "token", "key", "credential")

RULES: tuple[Rule, ...] = (
    # -- private keys ------------------------------------------------------------------------------------
    _rule("private-key-block", "private key",
          r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?P<secret>[\s\S]+?)(?=-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
          ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAplanted\n-----END RSA PRIVATE KEY-----",
           "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAplanted\n-----END OPENSSH PRIVATE KEY-----",
           "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGplantedPGPkeymaterial\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----",
           "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqplanted\n-----END ENCRYPTED PRIVATE KEY-----",
           '{"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiGplanted\\n-----END PRIVATE KEY-----\\n"}'),
          needles=("private key",)),
    _rule("private-key-base64", "private key", r"(?P<secret>LS0tLS1CRUdJT[A-Za-z0-9+/]{16,}={0,2})",
          ("client-key-data: " + base64.b64encode(b"-----BEGIN RSA PRIVATE KEY-----\nMIIEplanted\n-----END RSA PRIVATE KEY-----\n").decode(),
           "tls.key: " + base64.b64encode(b"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIplanted\n-----END EC PRIVATE KEY-----\n").decode()),
          _pem_private, needles=("ls0tls1crudjt",)),
    _rule("kubeconfig-credential", "kubeconfig credential",
          r"(?i)(?:client-key-data|id-token|refresh-token|access-token)[\"']?[ \t]*:[ \t]*[\"']?(?P<secret>[^\s\"']{8,})",
          ("    client-key-data: bm90LWEtcGVtLWJ1dC1zdGlsbC1hLWtleQ==", "        id-token: oidc-id-token-planted-value"),
          needles=("client-key-data", "-token")),
    # -- cloud providers ---------------------------------------------------------------------------------
    _rule("aws-access-key-id", "cloud key",
          r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)(?<![A-Z0-9]....)(?P<secret>[A-Z0-9]{16})(?![A-Z0-9])",
          ("aws_access_key_id = AKIAIOSFODNN7PLANTED", "ASIAY34FZKBOKMUTVV7A"),
          needles=("akia", "asia", "abia", "acca", "agpa", "aida", "aipa", "anpa", "anva", "aroa", "apka")),
    _rule("aws-secret-access-key", "cloud key",
          r"(?i)aws[\w.-]{0,30}?(?:secret|key)[\w.-]{0,20}?[\"']?(?:[ \t]*[=:][ \t]*|[ \t]+)[\"']?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
          ("AWS_SECRET_ACCESS_KEY wJalrXUtnFEMI/K7MDENG/bPxRfiCYPLANTEDKEY", "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYPLANTEDKEY",
           "export AWS_SECRET_ACCESS_KEY=\"wJalrXUtnFEMI/K7MDENG/bPxRfiCYPLANTEDKEY\""),
          needles=("aws",)),
    _rule("gcp-api-key", "cloud key", r"AIza(?P<secret>[0-9A-Za-z_-]{35})(?![\w-])",
          ("key=AIzaSyDplantedplantedplantedplanted0123",), needles=("aiza",)),
    _rule("gcp-oauth-client-secret", "cloud key", r"GOCSPX-(?P<secret>[A-Za-z0-9_-]{28})(?![\w-])",
          ("client_secret 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",), needles=("gocspx-",)),
    _rule("azure-storage-key", "cloud key / connection string",
          r"(?i)(?:accountkey|sharedaccesskey|sharedsecretvalue)[ \t]*=[ \t]*(?P<secret>[A-Za-z0-9+/]{16,}={0,2})",
          ("DefaultEndpointsProtocol=https;AccountName=gpudata;AccountKey=pLaNtEdAzUrEkEy0123456789abcdefABCDEF+/xyz==;EndpointSuffix=core.windows.net",
           "Endpoint=sb://bus.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=plantedServiceBusKey0123456789abc="),
          needles=("accountkey", "sharedaccesskey", "sharedsecretvalue")),
    _rule("azure-sas-signature", "cloud key", r"(?i)[?&;]sig=(?P<secret>[A-Za-z0-9%+/=]{16,})",
          ("https://acct.blob.core.windows.net/c/m.bin?sv=2022-11-02&se=2030-01-01&sp=r&sig=plAnTeDsIgNaTuRe%2B0123456789%3D",),
          needles=("sig=",)),
    _rule("azure-ad-client-secret", "cloud key", r"\dQ~(?<=[A-Za-z0-9_~.-]{3}...)(?P<secret>[A-Za-z0-9_~.-]{31,34})(?![\w~.-])",
          ("AZURE_CLIENT_SECRET_VALUE abc8Q~plantedplantedplantedplantedpla",), needles=("q~",)),
    # -- source hosting, chat, registries, AI services -----------------------------------------------------
    _rule("github-token", "token", r"(?:gh[pousr]_(?P<secret>[A-Za-z0-9]{36,255})|github_pat_(?P<pat>[A-Za-z0-9_]{22,255}))",
          ("ghp_plantedPLANTEDplantedPLANTED01234567", "git clone https://x:ghs_plantedPLANTEDplantedPLANTED01234567@github.com/o/r",
           "github_pat_11PLANTED0plantedplanted_plantedplantedplantedplantedplanted"),
          needles=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    _rule("gitlab-token", "token", r"gl(?:pat|dt|rt|ptt|ft|cbt|imt|soat|oas)-(?P<secret>[A-Za-z0-9_-]{20,})",
          ("glpat-plantedPLANTED0123456",), needles=("glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glcbt-", "glimt-", "glsoat-", "gloas-")),
    _rule("slack-token", "token", r"xox[abposre]-(?P<secret>[A-Za-z0-9-]{10,})",
          ("xoxb-1234567890-0987654321-plantedSLACKbot",), needles=("xox",)),
    _rule("slack-webhook", "webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9+/_-]{8,})",
          ("https://hooks.slack.com/services/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",), needles=("hooks.slack.com",)),
    _rule("chat-webhook", "webhook",
          r"(?:discord(?:app)?\.com/api/webhooks/|webhook\.office\.com/webhookb2/|outlook\.office\.com/webhook/)(?P<secret>[^\s\"'<>]{8,})",
          ("https://discord.com/api/webhooks/123456789/plantedDiscordHookToken",), needles=("/webhook",)),
    _rule("huggingface-token", "token", r"hf_(?<![\w-]...)(?P<secret>[A-Za-z0-9]{30,})",
          ("HF_TOKEN=hf_plantedPLANTEDplantedPLANTED012345",), needles=("hf_",)),
    _rule("openai-key", "token", r"sk-(?<![\w-]...)(?:proj-|svcacct-|admin-|ant-api\d\d-)?(?P<secret>[A-Za-z0-9_-]{20,})",
          ("sk-proj-plantedPLANTEDplantedPLANTED0123",), needles=("sk-",)),
    _rule("registry-token", "token",
          r"(?:npm_(?P<secret>[A-Za-z0-9]{36})|dckr_pat_(?P<docker>[A-Za-z0-9_-]{20,})|pypi-AgEIcHlwaS5vcmc(?P<pypi>[A-Za-z0-9_-]{20,}))",
          ("npm_plantedPLANTEDplantedPLANTED01234567", "dckr_pat_plantedPLANTEDplanted01", "pypi-AgEIcHlwaS5vcmcplantedPLANTEDplanted"),
          needles=("npm_", "dckr_pat_", "pypi-")),
    _rule("payment-key", "token", r"(?:[sr]k_live_(?P<secret>[0-9a-zA-Z]{20,})|SG\.(?P<sendgrid>[\w-]{22}\.[\w-]{43}))",
          ("sk_live_plantedPLANTEDplanted0123",), needles=("k_live_", "sg.")),
    _rule("nvidia-api-key", "token", r"nvapi-(?P<secret>[A-Za-z0-9_-]{20,})", ("NGC_API_KEY=nvapi-plantedPLANTEDplanted0123456",),
          needles=("nvapi-",)),
    _rule("jwt", "token", r"eyJ[A-Za-z0-9_-]{8,}\.(?P<secret>eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})",
          ("Authorization: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.plantedSignature0",), needles=("eyj",)),
    # -- passwords in URLs, headers, command lines, env and config ------------------------------------------
    _rule("url-password", "password", r"://[^:/\s@\"']{0,200}:(?P<secret>[^@\s/\"']{1,400})@",
          ("postgres://app:plantedDbPw@db:5432/x", "redis://:plantedRedisPw@redis:6379/0", "mongodb+srv://u:plantedMongoPw@c.mongodb.net/"),
          needles=("://",)),
    _rule("basic-auth-header", "password", r"(?i)authorization[\"']?\s*[:=]\s*[\"']?(?:basic|bearer|token)\s+(?P<secret>[A-Za-z0-9+/=._~-]{6,})",
          ("Authorization: Basic cGxhbnRlZDpwbGFudGVk",), needles=("authorization",)),
    _rule("curl-user", "password", r"-(?<![\w.]-)(?:u|-user|-proxy-user)(?:[ \t]+|=)[\"']?[^\s:\"']{0,200}:(?P<secret>[^\s\"']+)",
          ("curl -sf -u admin:plantedCurlPw https://registry.local/v2/", "curl --user=ci:plantedCurlPw2 http://x"),
          needles=("-u", "--user", "--proxy-user")),
    _rule("cli-flag", "password",
          r"(?i)-(?<![\w.]-)[\w.-]*" + _SECRET_WORD + r"(?:=|[ \t]+)[\"']?(?P<secret>[^\s\"'-][^\s\"']*)",
          ("--registry-password plantedRegistryPw", "--docker-password=plantedDockerPw", "kubeadm join --token abcdef.plantedbootst"),
          needles=_WORDS),
    _rule("env-assignment", "password",
          r"_(?:PASSWORD|PASSWD|PASSPHRASE|PWD|PASS|TOKEN|SECRET|API_KEY|APIKEY|ACCESS_KEY|SECRET_KEY|PRIVATE_KEY|CREDENTIALS?)"
          r"[\"']?(?:[ \t]*[=:][ \t]*|[ \t]+)[\"']?(?P<secret>[^\s\"',;]{4,})",
          ("MYSQL_ROOT_PASS plantedMysqlPw", "DB_PASS=plantedDbPass", "GITLAB_TOKEN: plantedGitlabTok"),
          _env_name, needles=_WORDS),
    _rule("key-assignment", "password",
          r"(?i)" + _SECRET_WORD + r"[\"']?[ \t]*[=:][ \t]*(?P<secret>\"[^\"\n]+\"|'[^'\n]+'|[^\s,;\"'&]+)",
          ("db.password=plantedPropPw", "Server=sql;Database=x;User Id=sa;Password=plantedSqlPw;", '"client_secret": "plantedOauthSecret"'),
          needles=_WORDS),
)

FAMILIES = tuple(dict.fromkeys(r.family for r in RULES))


def secret_span(m: re.Match) -> tuple[int, int] | None:
    """The span of the part of a match to replace: the named group other than ``name`` that took part."""
    for group in m.re.groupindex:
        if group != "name" and m.start(group) >= 0:
            return m.start(group), m.end(group)
    return None
