"""oneflow_like.hub (torch.hub): cache directory, downloads (file:// URLs, SHA256 prefixes),
load_state_dict_from_url, and hubconf.py repositories, local and from GitHub (the GitHub
path runs for real with hub.urlopen patched to serve a local zip and API listing)."""
import hashlib
import io
import json
import os
import textwrap
import urllib.request
import zipfile
from urllib.error import HTTPError, URLError

import numpy as np
import pytest

import oneflow_like as flow
from oneflow_like import hub


@pytest.fixture(autouse=True)
def _hub_home(tmp_path, monkeypatch):
    """Every test gets its own TORCH_HOME and no set_dir override."""
    monkeypatch.setattr(hub, "_hub_dir", None)
    for var in ("TORCH_HUB", "TORCH_MODEL_ZOO", "XDG_CACHE_HOME", "GITHUB_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch_home"))


def _url(path):
    return "file://" + os.path.abspath(path)


def _sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_get_dir_environment_and_set_dir(tmp_path, monkeypatch):
    assert hub.get_dir() == str(tmp_path / "torch_home" / "hub")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub.get_dir() == str(tmp_path / "xdg" / "oneflow_like" / "hub")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert hub.get_dir() == os.path.expanduser("~/.cache/oneflow_like/hub")
    hub.set_dir(tmp_path / "mine")
    assert hub.get_dir() == str(tmp_path / "mine")
    monkeypatch.setenv("TORCH_HUB", "/elsewhere")  # deprecated, as in PyTorch: a warning only
    with pytest.warns(UserWarning, match="TORCH_HUB is deprecated"):
        assert hub.get_dir() == str(tmp_path / "mine")


def test_download_url_to_file_hash_progress_and_atomicity(tmp_path, capfd):
    src = tmp_path / "blob.bin"
    payload = np.random.default_rng(0).integers(0, 256, 300_000, dtype=np.uint8).tobytes()
    src.write_bytes(payload)
    digest = hashlib.sha256(payload).hexdigest()
    dst = tmp_path / "out" / "copy.bin"
    dst.parent.mkdir()
    hub.download_url_to_file(_url(src), str(dst), hash_prefix=digest[:10], progress=True)
    assert dst.read_bytes() == payload
    err = capfd.readouterr().err
    assert "100%" in err and "293k" in err.replace("K", "k")  # tqdm's bar, in KiB
    # A wrong prefix raises, names the URL, and leaves the good file and no .partial behind.
    with pytest.raises(RuntimeError, match=r"invalid hash value.*" + digest + ".*blob.bin"):
        hub.download_url_to_file(_url(src), str(dst), hash_prefix="0" + digest[:7])
    assert dst.read_bytes() == payload
    assert sorted(os.listdir(dst.parent)) == ["copy.bin"]
    with pytest.raises(URLError, match="missing.bin"):
        hub.download_url_to_file(_url(tmp_path / "missing.bin"), str(tmp_path / "x"))
    assert not (tmp_path / "x").exists()


def _state_dict():
    g = flow.Generator().manual_seed(3)
    return {"weight": flow.randn(4, 3, generator=g), "bias": flow.randn(4, generator=g)}


def _assert_same(a, b):
    assert sorted(a) == sorted(b)
    for k in a:
        np.testing.assert_array_equal(a[k].numpy(), b[k].numpy())


def test_load_state_dict_from_url_hash_check_cache_and_file_name(tmp_path, capfd):
    sd = _state_dict()
    raw = tmp_path / "raw.pt"
    flow.save(sd, str(raw))
    good = tmp_path / f"tiny-{_sha256(raw)[:8]}.pt"
    os.rename(raw, good)
    out = hub.load_state_dict_from_url(_url(good), check_hash=True, progress=True)
    _assert_same(out, sd)
    cached = os.path.join(hub.get_dir(), "checkpoints", good.name)
    assert os.path.isfile(cached)
    assert f'Downloading: "{_url(good)}"' in capfd.readouterr().err
    os.remove(good)  # the second call reads the cache, never the URL
    _assert_same(hub.load_state_dict_from_url(_url(good), check_hash=True), sd)
    # A name whose hash part does not match the contents: RuntimeError, nothing cached.
    bad = tmp_path / "tiny-deadbeef.pt"
    flow.save(sd, str(bad))
    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.load_state_dict_from_url(_url(bad), model_dir=str(tmp_path / "m"), check_hash=True)
    assert os.listdir(tmp_path / "m") == []
    # check_hash=False ignores the name; file_name renames the cached copy.
    out = hub.load_state_dict_from_url(
        _url(bad), model_dir=str(tmp_path / "m"), file_name="renamed.pt", progress=False
    )
    _assert_same(out, sd)
    assert os.listdir(tmp_path / "m") == ["renamed.pt"]


def test_load_state_dict_from_url_formats(tmp_path):
    sd = _state_dict()
    st = tmp_path / "w.safetensors"
    flow.save(sd, str(st))
    _assert_same(hub.load_state_dict_from_url(_url(st), progress=False), sd)
    # A zip holding one checkpoint (the legacy packaging PyTorch's hub unpacks).
    inner = tmp_path / "inner.pt"
    flow.save(sd, str(inner))
    packed = tmp_path / "packed.zip"
    with zipfile.ZipFile(packed, "w") as z:
        z.write(inner, "inner.pt")
    md = tmp_path / "md"
    _assert_same(hub.load_state_dict_from_url(_url(packed), str(md), progress=False), sd)
    assert sorted(os.listdir(md)) == ["inner.pt", "packed.zip"]
    # Not a checkpoint at all: the error names the URL.
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match=r"load_state_dict_from_url: file://.*junk\.pt"):
        hub.load_state_dict_from_url(_url(junk), progress=False)


def test_load_state_dict_from_url_map_location_and_weights_only(tmp_path):
    # A pickled object: only weights_only=False (the hub default, as PyTorch's) loads it.
    path = tmp_path / "obj.pt"
    flow.save({"w": flow.ones(2), "box": _PickledBox(5)}, str(path))
    out = hub.load_state_dict_from_url(_url(path), progress=False, map_location="cpu")
    assert out["box"].n == 5 and out["w"].device.type == "cpu"
    with pytest.raises(Exception, match="Weights only load failed"):
        hub.load_state_dict_from_url(
            _url(path), model_dir=str(tmp_path / "m2"), progress=False, weights_only=True
        )


class _PickledBox:
    def __init__(self, n):
        self.n = n


def test_torch_zip_checkpoint_is_a_clear_error(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "torch_format.pth"
    torch.save({"w": torch.ones(2)}, str(path))
    with pytest.raises(RuntimeError, match=r"torch_format\.pth.*PyTorch.*safetensors"):
        hub.load_state_dict_from_url(_url(path), progress=False)


_HUBCONF = '''
dependencies = ["numpy"]
import helper
import oneflow_like as flow


def tiny(width=4, pretrained=False):
    """A Linear(3, width); pretrained fills it with helper.FILL."""
    m = flow.nn.Linear(3, width)
    if pretrained:
        with flow.no_grad():
            m.weight.fill_(helper.FILL)
    return m


def _private():
    return None


NOT_CALLABLE = 3
'''


def _write_repo(root, hubconf=_HUBCONF):
    root.mkdir(parents=True)
    (root / "hubconf.py").write_text(textwrap.dedent(hubconf))
    (root / "helper.py").write_text("FILL = 0.25\n")
    return root


def test_load_local_repository(tmp_path):
    repo = _write_repo(tmp_path / "repo")
    m = hub.load(str(repo), "tiny", 5, source="local", pretrained=True)
    assert isinstance(m, flow.nn.Linear) and tuple(m.weight.shape) == (5, 3)
    assert float(m.weight.sum()) == pytest.approx(0.25 * 15)
    with pytest.raises(RuntimeError, match=r"Cannot find callable missing in hubconf"):
        hub.load(str(repo), "missing", source="local")
    with pytest.raises(RuntimeError, match=r"Cannot find callable NOT_CALLABLE"):
        hub.load(str(repo), "NOT_CALLABLE", source="local")
    with pytest.raises(ValueError, match=r'Unknown source: "svn"'):
        hub.load(str(repo), "tiny", source="svn")
    with pytest.raises(FileNotFoundError, match="needs a directory"):
        hub.load(str(tmp_path / "nowhere"), "tiny", source="local")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match=r"no hubconf\.py in .*empty"):
        hub.load(str(empty), "tiny", source="local")


def test_missing_dependencies_are_named(tmp_path):
    conf = _HUBCONF.replace('["numpy"]', '["numpy", "no_such_pkg_xyz", "nor_this_one"]')
    repo = _write_repo(tmp_path / "repo", conf)
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_pkg_xyz, nor_this_one"):
        hub.load(str(repo), "tiny", source="local")


class _FakeGitHub:
    """hub.urlopen for github.com: serves a zip of `repo_dir` (under GitHub's top folder name)
    for /zipball/<ref>, the API's branch and tag listings, and /tree/main/ (404 unless
    has_main); records each URL asked for. Responses are real urllib file:// responses."""

    def __init__(self, tmp_path, repo_dir, branches=("main",), tags=(), has_main=True):
        self.requests = []
        self.has_main = has_main
        self.zip = tmp_path / "served.zip"
        with zipfile.ZipFile(self.zip, "w") as z:
            for name in sorted(os.listdir(repo_dir)):
                z.write(repo_dir / name, f"owner-repo-0123abc/{name}")
        self.files = {}
        for kind, names in (("branches", branches), ("tags", tags)):
            listing = [
                {"name": n, "commit": {"sha": f"{i:02d}" + "f" * 38}} for i, n in enumerate(names)
            ]
            page1 = tmp_path / f"{kind}1.json"
            page1.write_text(json.dumps(listing))
            page2 = tmp_path / f"{kind}2.json"
            page2.write_text("[]")
            base = f"https://api.github.com/repos/owner/repo/{kind}?per_page=100&page="
            self.files[base + "1"] = page1
            self.files[base + "2"] = page2
        self.refs = set(branches) | set(tags)

    def __call__(self, req):
        url = req.full_url
        self.requests.append(url)
        assert req.get_header("User-agent") == "oneflow_like.hub"
        if url == "https://github.com/owner/repo/tree/main/":
            if not self.has_main:
                raise HTTPError(url, 404, "Not Found", {}, io.BytesIO())
            return urllib.request.urlopen(_url(self.zip))
        if url.startswith("https://github.com/owner/repo/zipball/"):
            if url.rsplit("/", 1)[1] not in self.refs:
                raise HTTPError(url, 404, "Not Found", {}, io.BytesIO())
            return urllib.request.urlopen(_url(self.zip))
        if url in self.files:
            assert req.get_header("Accept") == "application/vnd.github.v3+json"
            return urllib.request.urlopen(_url(self.files[url]))
        raise URLError(f"unexpected URL {url}")


def test_github_source_through_a_served_zip(tmp_path, monkeypatch, capfd):
    fake = _FakeGitHub(tmp_path, _write_repo(tmp_path / "src"))
    monkeypatch.setattr(hub, "urlopen", fake)
    m = hub.load("owner/repo", "tiny", width=2, trust_repo=True)
    assert tuple(m.weight.shape) == (2, 3)
    repo_dir = os.path.join(hub.get_dir(), "owner_repo_main")
    assert {"helper.py", "hubconf.py"} <= set(os.listdir(repo_dir))
    assert fake.requests == [
        "https://github.com/owner/repo/tree/main/",
        "https://api.github.com/repos/owner/repo/branches?per_page=100&page=1",
        "https://github.com/owner/repo/zipball/main",
    ]
    # Only the extracted repository and the trust list remain in the hub directory.
    assert sorted(os.listdir(hub.get_dir())) == ["owner_repo_main", "trusted_list"]
    with open(os.path.join(hub.get_dir(), "trusted_list")) as f:
        assert f.read().split() == ["owner_repo"]
    capfd.readouterr()
    # Cached: no download; list and help read the same hubconf.
    fake.requests.clear()
    assert hub.list("owner/repo:main") == ["tiny"]
    assert hub.help("owner/repo:main", "tiny").strip().startswith("A Linear(3, width)")
    assert fake.requests == []
    assert "Using cache found in" in capfd.readouterr().err
    # force_reload downloads again (skip_validation: no API listing).
    hub.load("owner/repo:main", "tiny", force_reload=True, skip_validation=True, verbose=False)
    assert fake.requests == ["https://github.com/owner/repo/zipball/main"]


def test_github_default_branch_validation_and_trust(tmp_path, monkeypatch):
    fake = _FakeGitHub(
        tmp_path, _write_repo(tmp_path / "src"), branches=("master",), tags=("v1",), has_main=False
    )
    monkeypatch.setattr(hub, "urlopen", fake)
    with pytest.warns(UserWarning, match="untrusted repository"):
        m = hub.load("owner/repo", "tiny", pretrained=True)  # no main branch: master
    assert os.path.isdir(os.path.join(hub.get_dir(), "owner_repo_master"))
    assert float(m.weight.mean()) == pytest.approx(0.25)
    # A tag is found on the API's second listing; an unknown ref is refused before download.
    assert hub.list("owner/repo:v1", trust_repo=True) == ["tiny"]
    with pytest.raises(ValueError, match=r"Cannot find nope in https://github.com/owner/repo"):
        hub.load("owner/repo:nope", "tiny", trust_repo=True)
    # trust_repo='check' asks about a repository not yet trusted; "no" refuses it.
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    with pytest.raises(Exception, match="Untrusted repository: other/repo"):
        hub.load("other/repo:main", "tiny", trust_repo="check")
    with pytest.raises(ValueError, match=r"'repo_owner/repo_name\[:ref\]'"):
        hub.load("just-a-name", "tiny")


def test_github_download_errors_name_the_url(tmp_path, monkeypatch):
    fake = _FakeGitHub(tmp_path, _write_repo(tmp_path / "src"), branches=("main", "dev"))
    fake.refs.discard("dev")  # listed by the API, but the archive is gone
    monkeypatch.setattr(hub, "urlopen", fake)
    with pytest.raises(HTTPError, match=r"https://github.com/owner/repo/zipball/dev"):
        hub.load("owner/repo:dev", "tiny", trust_repo=True)
    assert not os.path.exists(os.path.join(hub.get_dir(), "owner_repo_dev"))
    # An archive without GitHub's one top-level folder is refused, naming the URL.
    with zipfile.ZipFile(fake.zip, "w") as z:
        z.writestr("hubconf.py", "")
    with pytest.raises(RuntimeError, match=r"zipball/main has not one top-level folder"):
        hub.load("owner/repo:main", "tiny", trust_repo=True)
    assert sorted(os.listdir(hub.get_dir())) == ["trusted_list"]


def test_mock_torch_hub(tmp_path):
    from oneflow_like import mock_torch

    sd = _state_dict()
    path = tmp_path / "m.pt"
    flow.save(sd, str(path))
    with mock_torch.enable():
        import torch

        out = torch.hub.load_state_dict_from_url(_url(path), progress=False)
        assert torch.hub.get_dir() == hub.get_dir()
    _assert_same(out, sd)
