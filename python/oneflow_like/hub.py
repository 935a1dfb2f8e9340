"""oneflow_like.hub: torch.hub on oneflow_like. Pretrained weights by URL and models from a
repository's hubconf.py (a GitHub repository fetched as a zip archive, or a local directory).

    sd = flow.hub.load_state_dict_from_url(url, check_hash=True)   # cached in get_dir()/checkpoints
    model = flow.hub.load("owner/repo:ref", "entry", pretrained=True)  # or source="local"

The cache directory is get_dir(): set_dir(d) if called, else $TORCH_HOME/hub, else
$XDG_CACHE_HOME/oneflow_like/hub, else ~/.cache/oneflow_like/hub. Downloads go to a temporary
file beside the destination and are renamed into place only once complete (and, with a hash
prefix, verified), so a broken download never replaces a good file. Checkpoints are read with
flow.load (our format or safetensors); PyTorch's own .pt/.pth zip files are not readable.
"""
import contextlib
import errno
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import uuid
import warnings
import zipfile
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen  # module globals: tests patch hub.urlopen

import oneflow_like as flow

__all__ = [
    "download_url_to_file",
    "get_dir",
    "help",
    "list",
    "load",
    "load_state_dict_from_url",
    "set_dir",
]

ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 128 * 1024
# A hash prefix in a checkpoint's file name: resnet18-f37072fd.pth -> "f37072fd".
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
# Owners whose repositories are trusted without asking (PyTorch's list).
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")

_hub_dir = None


def _get_torch_home():
    default = os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "oneflow_like")
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, default))


def get_dir():
    """The hub cache directory (see the module docstring for the order of precedence)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead")
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    """Makes `d` the hub cache directory for this process (overrides the environment)."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


# ---------------------------------------------------------------------------------------------
# Downloads


def _open_url(url, headers=None, who="hub"):
    """urlopen with the URL in the error message; HTTPError and URLError keep their types."""
    req = Request(url, headers={"User-Agent": "oneflow_like.hub", **(headers or {})})
    try:
        return urlopen(req)
    except HTTPError as e:
        raise HTTPError(e.url, e.code, f"{e.reason} ({who}: {url})", e.hdrs, None) from None
    except URLError as e:
        raise URLError(f"{e.reason} ({who}: cannot open {url})") from None


def _read_url(url, headers=None):
    with contextlib.closing(_open_url(url, headers)) as r:
        return r.read().decode(r.headers.get_content_charset("utf-8"))


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Downloads `url` to the path `dst`, through `dst`.<random>.partial renamed at the end.
    hash_prefix: the SHA256 hex digest must start with it (RuntimeError otherwise, and `dst`
    is left untouched). progress: a tqdm bar on stderr."""
    from tqdm.auto import tqdm  # here: `import oneflow_like` stays free of tqdm's import

    u = _open_url(url, who="hub.download_url_to_file")
    length = u.info().get_all("Content-Length")
    file_size = int(length[0]) if length else None
    dst = os.path.expanduser(os.fspath(dst))
    # Not NamedTemporaryFile: its 0600 permissions would stick to the downloaded file.
    for _ in range(tempfile.TMP_MAX):
        tmp_dst = f"{dst}.{uuid.uuid4().hex}.partial"
        try:
            f = open(tmp_dst, "xb")
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(errno.EEXIST, "No usable temporary file name found", dst)
    try:
        sha256 = hashlib.sha256() if hash_prefix is not None else None
        with contextlib.closing(u), tqdm(
            total=file_size, disable=not progress, unit="B", unit_scale=True, unit_divisor=1024
        ) as bar:
            while True:
                buf = u.read(READ_DATA_CHUNK)
                if not buf:
                    break
                f.write(buf)
                if sha256 is not None:
                    sha256.update(buf)
                bar.update(len(buf))
        f.close()
        if file_size is not None and os.path.getsize(tmp_dst) != file_size:
            raise RuntimeError(
                f"hub.download_url_to_file: {url} ended after {os.path.getsize(tmp_dst)} of "
                f"{file_size} bytes"
            )
        if sha256 is not None:
            digest = sha256.hexdigest()
            if digest[: len(hash_prefix)] != hash_prefix:
                raise RuntimeError(
                    f'invalid hash value (expected "{hash_prefix}", got "{digest}") for {url}'
                )
        shutil.move(tmp_dst, dst)
    finally:
        f.close()
        if os.path.exists(tmp_dst):
            os.remove(tmp_dst)


def _is_legacy_zip_format(filename):
    """A zip holding exactly one file: the checkpoint packaging PyTorch's hub still accepts."""
    if not zipfile.is_zipfile(filename):
        return False
    with zipfile.ZipFile(filename) as z:
        infos = z.infolist()
        return len(infos) == 1 and not infos[0].is_dir()


def _check_not_torch_zip(filename, url):
    if zipfile.is_zipfile(filename):
        with zipfile.ZipFile(filename) as z:
            if any(n.endswith("data.pkl") for n in z.namelist()):
                raise RuntimeError(
                    f"hub.load_state_dict_from_url: {filename} (from {url}) is a PyTorch "
                    "torch.save zip checkpoint, which flow.load does not read; save it as "
                    "safetensors (safetensors.torch.save_file) and load that instead"
                )


def load_state_dict_from_url(
    url,
    model_dir=None,
    map_location=None,
    progress=True,
    check_hash=False,
    file_name=None,
    weights_only=False,
):
    """Downloads `url` into model_dir (default get_dir()/checkpoints) unless a file of that
    name is already there, and returns flow.load(file, map_location, weights_only=...).
    check_hash: the file name's "-<hex>." part must prefix the SHA256 of the download."""
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead")
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    if not filename:
        raise ValueError(f"hub.load_state_dict_from_url: {url!r} names no file; pass file_name=")
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stderr.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            m = HASH_REGEX.search(filename)
            hash_prefix = m.group(1) if m else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    if _is_legacy_zip_format(cached_file):
        with zipfile.ZipFile(cached_file) as z:
            member = z.infolist()[0].filename
            z.extractall(model_dir)
        cached_file = os.path.join(model_dir, member)
    _check_not_torch_zip(cached_file, url)
    try:
        return flow.load(cached_file, map_location=map_location, weights_only=weights_only)
    except ValueError as e:
        raise ValueError(f"hub.load_state_dict_from_url: {url} -> {cached_file}: {e}") from e


# ---------------------------------------------------------------------------------------------
# Repositories with a hubconf.py


def _parse_repo_info(github):
    """'owner/name[:ref]' -> (owner, name, ref); without a ref, main if it exists else master."""
    repo_info, _, ref = github.partition(":")
    parts = repo_info.split("/")
    if len(parts) != 2 or not all(parts) or (":" in github and not ref):
        raise ValueError(
            f"hub: repo {github!r} must be 'repo_owner/repo_name[:ref]' (source='github')"
        )
    owner, name = parts
    if ref:
        return owner, name, ref
    try:
        with contextlib.closing(_open_url(f"https://github.com/{owner}/{name}/tree/main/")):
            return owner, name, "main"
    except HTTPError as e:
        if e.code == 404:
            return owner, name, "master"
        raise
    except URLError as e:
        for ref in ("main", "master"):  # offline: fall back on a cached copy
            if os.path.exists(os.path.join(get_dir(), f"{owner}_{name}_{ref}")):
                return owner, name, ref
        raise RuntimeError(
            f"hub: cannot reach GitHub to find the default branch of {owner}/{name}, and "
            f"it is not cached in {get_dir()}"
        ) from e


def _validate_not_a_forked_repo(owner, name, ref):
    """The ref must be a branch, tag or commit of owner/name itself (not of a fork), as the
    GitHub API lists them; GITHUB_TOKEN, if set, authenticates those requests."""
    headers = {"Accept": "application/vnd.github.v3+json"}
    token = os.environ.get(ENV_GITHUB_TOKEN)
    if token is not None:
        headers["Authorization"] = f"token {token}"
    for kind in ("branches", "tags"):
        page = 0
        while True:
            page += 1
            url = f"https://api.github.com/repos/{owner}/{name}/{kind}?per_page=100&page={page}"
            entries = json.loads(_read_url(url, headers))
            if not entries:
                break
            for e in entries:
                if e["name"] == ref or e["commit"]["sha"].startswith(ref):
                    return
    raise ValueError(
        f"Cannot find {ref} in https://github.com/{owner}/{name}. If it's a commit from a "
        "forked repo, please call hub.load() with the forked repo directly."
    )


def _check_repo_is_trusted(owner, name, owner_name_branch, trust_repo, calling_fn):
    hub_dir = get_dir()
    path = os.path.join(hub_dir, "trusted_list")
    trusted = set()
    if os.path.exists(path):
        with open(path) as fh:
            trusted = {line.strip() for line in fh}
    owner_name = f"{owner}_{name}"
    # A repository downloaded before is trusted too (PyTorch's rule for caches made before
    # the trust list existed).
    is_trusted = (
        owner_name in trusted
        or os.path.isdir(os.path.join(hub_dir, owner_name_branch))
        or owner in _TRUSTED_REPO_OWNERS
    )
    if trust_repo is None:
        if not is_trusted:
            warnings.warn(
                f"You are about to download and run code from an untrusted repository "
                f"({owner}/{name}). To add it to your trusted list, call {calling_fn}(..., "
                f"trust_repo=True), or trust_repo='check' / False to be asked first."
            )
        return
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        answer = input(
            f"The repository {owner_name} does not belong to the list of trusted repositories "
            "and as such cannot be downloaded. Do you trust this repository and wish to add it "
            "to the trusted list of repositories (y/N)?"
        ).lower()
        if answer in ("n", "no", ""):
            raise Exception(f"Untrusted repository: {owner}/{name}.")
        if answer not in ("y", "yes"):
            raise ValueError(f"Unrecognized response {answer}.")
    if owner_name not in trusted:
        with open(path, "a") as fh:
            fh.write(owner_name + "\n")


def _get_cache_or_reload(github, force_reload, trust_repo, calling_fn, verbose, skip_validation):
    """The directory of the repository's extracted zip archive under get_dir(), downloaded
    from https://github.com/OWNER/REPO/zipball/REF unless cached (or force_reload)."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _parse_repo_info(github)
    safe_ref = ref.replace("/", "_")
    owner_name_branch = f"{owner}_{name}_{safe_ref}"
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_repo_is_trusted(owner, name, owner_name_branch, trust_repo, calling_fn)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    if not skip_validation:
        _validate_not_a_forked_repo(owner, name, ref)
    cached_zip = os.path.join(hub_dir, safe_ref + ".zip")
    with contextlib.suppress(FileNotFoundError):
        os.remove(cached_zip)
    url = f"https://github.com/{owner}/{name}/zipball/{ref}"
    sys.stderr.write(f'Downloading: "{url}" to {cached_zip}\n')
    try:
        download_url_to_file(url, cached_zip, progress=False)
    except HTTPError as e:
        if e.code != 300:
            raise
        # 300 Multiple Choices: the ref is both a branch and a tag; take the branch.
        warnings.warn(
            f"The ref {ref} is ambiguous (a tag and a branch of {owner}/{name}); using the branch"
        )
        url = f"https://github.com/{owner}/{name}/zipball/refs/heads/{ref}"
        download_url_to_file(url, cached_zip, progress=False)
    try:
        with zipfile.ZipFile(cached_zip) as z:
            top = z.infolist()[0].filename.split("/")[0]
            if not all(n.startswith(top + "/") for n in z.namelist()):
                raise RuntimeError(f"hub: {url} has not one top-level folder")
            extracted = os.path.join(hub_dir, top)
            shutil.rmtree(extracted, ignore_errors=True)
            z.extractall(hub_dir)
    except (zipfile.BadZipFile, IndexError) as e:
        raise RuntimeError(f"hub: {url} is not a repository zip archive ({e})") from e
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(cached_zip)
    shutil.rmtree(repo_dir, ignore_errors=True)
    shutil.move(extracted, repo_dir)
    return repo_dir


@contextlib.contextmanager
def _add_to_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir):
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    if not os.path.isfile(path):
        raise FileNotFoundError(errno.ENOENT, f"hub: no {MODULE_HUBCONF} in {repo_dir}", path)
    spec = importlib.util.spec_from_file_location(MODULE_HUBCONF[:-3], path)
    module = importlib.util.module_from_spec(spec)
    with _add_to_sys_path(repo_dir):
        spec.loader.exec_module(module)
    return module


def _check_dependencies(module):
    deps = getattr(module, VAR_DEPENDENCY, None)
    if deps is None:
        return
    missing = [p for p in deps if importlib.util.find_spec(p) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)} ({module.__file__})")


def _load_entry_from_hubconf(module, model):
    if not isinstance(model, str):
        raise ValueError(
            f"Invalid input: model should be a string of function name, got {type(model)}"
        )
    _check_dependencies(module)
    func = getattr(module, model, None)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf ({module.__file__})")
    return func


def _entrypoints(module):
    return [f for f in dir(module) if not f.startswith("_") and callable(getattr(module, f))]


def list(github, force_reload=False, skip_validation=False, trust_repo=None, verbose=True):
    """The callable entry points of the GitHub repository's hubconf.py."""
    repo_dir = _get_cache_or_reload(
        github, force_reload, trust_repo, "list", verbose, skip_validation
    )
    return _entrypoints(_import_hubconf(repo_dir))


def help(github, model, force_reload=False, skip_validation=False, trust_repo=None):
    """The docstring of entry point `model` of the GitHub repository's hubconf.py."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, "help", True, skip_validation)
    return _load_entry_from_hubconf(_import_hubconf(repo_dir), model).__doc__


def _load_local(hubconf_dir, model, *args, **kwargs):
    entry = _load_entry_from_hubconf(_import_hubconf(hubconf_dir), model)
    with _add_to_sys_path(hubconf_dir):  # entry points may import the repository's modules
        return entry(*args, **kwargs)


def load(
    repo_or_dir,
    model,
    *args,
    source="github",
    trust_repo=None,
    force_reload=False,
    verbose=True,
    skip_validation=False,
    **kwargs,
):
    """Calls entry point `model` of the repository's hubconf.py with *args, **kwargs.
    source='github': repo_or_dir is 'owner/name[:ref]', fetched into get_dir() (cached);
    source='local': repo_or_dir is a directory holding hubconf.py."""
    source = str(source).lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache_or_reload(
            repo_or_dir, force_reload, trust_repo, "load", verbose, skip_validation
        )
    elif not os.path.isdir(repo_or_dir):
        raise FileNotFoundError(
            errno.ENOENT, "hub.load: source='local' needs a directory", repo_or_dir
        )
    return _load_local(repo_or_dir, model, *args, **kwargs)
