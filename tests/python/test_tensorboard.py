"""oneflow_like.utils.tensorboard.SummaryWriter: every summary is written, then read back with
the tensorboard package's own readers (EventAccumulator, EventFileLoader) and compared with
values computed here in float64 (and with PyTorch's writer where Debian's torch has one)."""
import glob
import io
import os
import wave

import numpy as np
import pytest
from google.protobuf import text_format
from PIL import Image
from tensorboard.backend.event_processing import event_accumulator as ea
from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.hparams import api_pb2
from tensorboard.plugins.hparams import metadata as hp_metadata
from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig
from tensorboard.util import tensor_util

import oneflow_like as flow
from oneflow_like.utils.tensorboard import SummaryWriter


def _acc(log_dir):
    acc = ea.EventAccumulator(
        str(log_dir),
        size_guidance={ea.SCALARS: 0, ea.IMAGES: 0, ea.HISTOGRAMS: 0, ea.TENSORS: 0},
    )
    acc.Reload()
    return acc


def _events(log_dir):
    (path,) = glob.glob(os.path.join(str(log_dir), "events.out.tfevents.*"))
    return list(LegacyEventFileLoader(path).Load())


def test_scalars_steps_walltimes_and_inputs(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(5):
            w.add_scalar("loss", flow.tensor(1.0 / (step + 1)), step, walltime=100.0 + step)
        w.add_scalar("np", np.float64(2.5), 7)
        w.add_scalar("py", 3, 8)
        w.add_scalar("one_elem", flow.ones(1, 1) * 4, 9)
        w.add_scalar("new", 0.125, 1, new_style=True)
        w.add_scalar("new64", 1 / 3, 1, new_style=True, double_precision=True)
    acc = _acc(tmp_path)
    loss = acc.Scalars("loss")
    assert [e.step for e in loss] == [0, 1, 2, 3, 4]
    assert [e.wall_time for e in loss] == [100.0, 101.0, 102.0, 103.0, 104.0]
    np.testing.assert_allclose([e.value for e in loss], 1.0 / np.arange(1, 6), rtol=1e-7)
    assert [(e.step, e.value) for e in acc.Scalars("np")] == [(7, 2.5)]
    assert [(e.step, e.value) for e in acc.Scalars("py")] == [(8, 3.0)]
    assert [(e.step, e.value) for e in acc.Scalars("one_elem")] == [(9, 4.0)]
    # New-style scalars are tensors the scalars plugin owns.
    assert acc.SummaryMetadata("new").plugin_data.plugin_name == "scalars"
    assert tensor_util.make_ndarray(acc.Tensors("new")[0].tensor_proto) == np.float32(0.125)
    v64 = tensor_util.make_ndarray(acc.Tensors("new64")[0].tensor_proto)
    assert v64.dtype == np.float64 and v64 == 1 / 3


def test_scalar_errors_name_the_method_and_shape(tmp_path):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(ValueError, match=r"add_scalar: 'x' needs a single value.*\(2, 3\)"):
            w.add_scalar("x", flow.zeros(2, 3))
        with pytest.raises(TypeError, match="add_scalar: expected a tensor.*dict"):
            w.add_scalar("x", {"a": 1})


def test_add_scalars_writes_one_run_per_tag(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(3):
            w.add_scalars("train/loss", {"a": step, "b": 10.0 * step}, step)
    for name, scale in (("a", 1.0), ("b", 10.0)):
        acc = _acc(tmp_path / f"train_loss_{name}")
        assert acc.Tags()["scalars"] == ["train/loss"]
        got = [(e.step, e.value) for e in acc.Scalars("train/loss")]
        assert got == [(s, scale * s) for s in range(3)]


def _check_histogram(h, values):
    """The proto against float64 statistics, and its buckets against np.histogram on the
    proto's own edges (the first bucket is the empty one carrying the left edge)."""
    assert h.num == values.size
    assert h.min == values.min() and h.max == values.max()
    assert h.sum == pytest.approx(values.sum(), rel=1e-12, abs=1e-12)
    assert h.sum_squares == pytest.approx(values.dot(values), rel=1e-12)
    limits, counts = np.array(h.bucket_limit), np.array(h.bucket)
    assert counts[0] == 0 and counts[1] > 0 and counts[-1] > 0
    np.testing.assert_array_equal(np.histogram(values, bins=limits)[0], counts[1:])
    return limits, counts


def test_histograms(tmp_path):
    x = flow.randn(2000, dtype=flow.float64)
    values = x.numpy()
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("tf", x, 3)
        w.add_histogram("ten", values, 4, bins=10)
        w.add_histogram("auto", values, 5, bins="auto")
        w.add_histogram("merged", values, 6, bins=100, max_bins=7)
        w.add_histogram_raw("raw", 0.0, 3.0, 6, 9.0, 17.0, [1.0, 2.0, 3.0], [2, 1, 3], 7)
        with pytest.raises(ValueError, match="add_histogram: 'bad' holds NaN"):
            w.add_histogram("bad", np.array([1.0, np.nan]))
        with pytest.raises(ValueError, match="add_histogram: 'empty' has no values"):
            w.add_histogram("empty", np.zeros(0))
    acc = _acc(tmp_path)
    (tf,) = acc.Histograms("tf")
    assert tf.step == 3
    limits, _ = _check_histogram(tf.histogram_value, values)
    # TensorFlow's buckets: +-1e-12 * 1.1**k, and 0.
    pos = limits[limits > 0]
    np.testing.assert_allclose(pos[1:] / pos[:-1], 1.1, rtol=1e-9)
    limits, counts = _check_histogram(acc.Histograms("ten")[0].histogram_value, values)
    ref_counts, ref_edges = np.histogram(values, bins=10)
    np.testing.assert_allclose(limits, ref_edges)  # randn fills all 10 bins
    np.testing.assert_array_equal(counts[1:], ref_counts)
    _check_histogram(acc.Histograms("auto")[0].histogram_value, values)
    limits, counts = _check_histogram(acc.Histograms("merged")[0].histogram_value, values)
    assert len(counts) - 1 <= 7
    raw = acc.Histograms("raw")[0].histogram_value
    assert (list(raw.bucket_limit), list(raw.bucket), raw.num) == ([1.0, 2.0, 3.0], [2, 1, 3], 6)


def _decode(image_event):
    return np.asarray(Image.open(io.BytesIO(image_event.encoded_image_string)))


def test_images_formats_and_grids(tmp_path):
    rng = np.random.default_rng(1)
    chw = rng.random((3, 5, 7)).astype(np.float32)
    hwc_u8 = rng.integers(0, 256, (6, 4, 3), dtype=np.uint8)
    gray = rng.random((5, 6))
    rgba = rng.random((4, 2, 3))  # CHW with an alpha channel
    batch = rng.random((10, 1, 2, 3))  # NCHW, one channel
    with SummaryWriter(tmp_path) as w:
        w.add_image("chw", flow.tensor(chw), 1)
        w.add_image("hwc", hwc_u8, 2, dataformats="HWC")
        w.add_image("hw", gray, 3, dataformats="HW")
        w.add_image("rgba", rgba, 4)
        w.add_images("batch", batch, 5)
        w.add_images("nhwc", batch.transpose(0, 2, 3, 1), 6, dataformats="NHWC")
        with pytest.raises(ValueError, match=r"add_image: 'bad'.*dataformats 'CHW'.*\(5, 7\)"):
            w.add_image("bad", chw[0])
        with pytest.raises(ValueError, match="add_image: 'two'.*1, 3 or 4 channels, got 2"):
            w.add_image("two", chw[:2])
    acc = _acc(tmp_path)
    to_u8 = lambda a: np.clip(np.rint(a * 255.0), 0, 255).astype(np.uint8)  # noqa: E731
    ev = acc.Images("chw")[0]
    assert (ev.step, ev.width, ev.height) == (1, 7, 5)
    np.testing.assert_array_equal(_decode(ev), to_u8(chw.transpose(1, 2, 0)))
    np.testing.assert_array_equal(_decode(acc.Images("hwc")[0]), hwc_u8)
    np.testing.assert_array_equal(
        _decode(acc.Images("hw")[0]), np.repeat(to_u8(gray)[..., None], 3, 2)
    )
    np.testing.assert_array_equal(_decode(acc.Images("rgba")[0]), to_u8(rgba.transpose(1, 2, 0)))
    # 10 images in a grid of 8 a row: two rows, the second holding images 8 and 9.
    grid = _decode(acc.Images("batch")[0])
    assert grid.shape == (4, 24, 3)
    np.testing.assert_array_equal(grid[2:4, 3:6, 0], to_u8(batch[9, 0]))
    np.testing.assert_array_equal(grid[2:4, 6:, :], 0)
    np.testing.assert_array_equal(_decode(acc.Images("nhwc")[0]), grid)


def test_figure(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs = []
    for color in ("red", "blue"):
        fig = plt.figure(figsize=(2, 1.5), dpi=50)
        fig.patch.set_facecolor(color)
        figs.append(fig)
    with SummaryWriter(tmp_path) as w:
        w.add_figure("one", figs[0], 0, close=False)
        w.add_figure("two", figs, 1)
    assert plt.fignum_exists(figs[0].number) is False  # closed by the second call
    acc = _acc(tmp_path)
    one = _decode(acc.Images("one")[0])
    assert one.shape == (75, 100, 3)
    assert tuple(one[0, 0]) == (255, 0, 0)
    two = _decode(acc.Images("two")[0])
    assert two.shape == (75, 200, 3) and tuple(two[0, 150]) == (0, 0, 255)


def test_text(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_text("notes", "**lr** = 0.1 — ünïcode", 4)
    acc = _acc(tmp_path)
    (ev,) = acc.Tensors("notes/text_summary")
    assert ev.step == 4
    assert acc.SummaryMetadata("notes/text_summary").plugin_data.plugin_name == "text"
    assert tensor_util.make_ndarray(ev.tensor_proto).tolist() == ["**lr** = 0.1 — ünïcode".encode()]


def test_audio(tmp_path):
    t = np.arange(800) / 8000.0
    mono = 0.5 * np.sin(2 * np.pi * 440 * t)
    stereo = np.stack([mono, np.clip(3 * mono, -1, 1)])
    with SummaryWriter(tmp_path) as w:
        w.add_audio("mono", flow.tensor(mono[None]), 1, sample_rate=8000)
        w.add_audio("stereo", 3 * stereo, 2, sample_rate=8000)  # clipped to [-1, 1]
        with pytest.raises(ValueError, match=r"add_audio: 'bad': expected samples.*\(1, 2, 3\)"):
            w.add_audio("bad", np.zeros((1, 2, 3)))
    acc = _acc(tmp_path)
    for tag, ref in (("mono", mono[None]), ("stereo", np.clip(3 * stereo, -1, 1))):
        (ev,) = acc.Audio(tag)
        assert (ev.sample_rate, ev.length_frames, ev.content_type) == (8000, 800, "audio/wav")
        with wave.open(io.BytesIO(ev.encoded_audio_string)) as wav:
            assert (wav.getnchannels(), wav.getframerate()) == (len(ref), 8000)
            pcm = np.frombuffer(wav.readframes(800), "<i2").reshape(800, len(ref)).T
        np.testing.assert_allclose(pcm / 32767, ref, atol=0.5 / 32767 + 1e-12)


def test_custom_scalars(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_custom_scalars(
            {
                "Loss": {"both": ["Multiline", ["loss/train", "loss/val"]]},
                "Acc": {"band": ["Margin", ["acc", "acc_lo", "acc_hi"]]},
            }
        )
        with pytest.raises(ValueError, match="chart 'x': kind must be 'Multiline' or 'Margin'"):
            w.add_custom_scalars({"c": {"x": ["Pie", ["a"]]}})
    acc = _acc(tmp_path)
    (ev,) = acc.Tensors("custom_scalars__config__")
    layout = layout_pb2.Layout.FromString(tensor_util.make_ndarray(ev.tensor_proto).item())
    loss, accuracy = layout.category
    assert (loss.title, loss.chart[0].title) == ("Loss", "both")
    assert list(loss.chart[0].multiline.tag) == ["loss/train", "loss/val"]
    series = accuracy.chart[0].margin.series[0]
    assert (series.value, series.lower, series.upper) == ("acc", "acc_lo", "acc_hi")


def test_hparams(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_hparams(
            {"lr": 0.01, "opt": "adam", "bn": True, "layers": flow.tensor(3)},
            {"hp/acc": 0.75, "hp/loss": flow.tensor(0.5)},
            hparam_domain_discrete={"opt": ["adam", "sgd"]},
            run_name="trial",
        )
        with pytest.raises(ValueError, match=r"hparam 'f' = .*values must be int, float"):
            w.add_hparams({"f": [1, 2]}, {})
        with pytest.raises(TypeError, match="should be dicts"):
            w.add_hparams([("lr", 1)], {})
    acc = _acc(tmp_path / "trial")
    content = acc.PluginTagToContent(hp_metadata.PLUGIN_NAME)
    exp = hp_metadata.parse_experiment_plugin_data(content[hp_metadata.EXPERIMENT_TAG])
    infos = {i.name: i for i in exp.hparam_infos}
    assert list(infos) == ["lr", "opt", "bn", "layers"]
    assert [v.string_value for v in infos["opt"].domain_discrete.values] == ["adam", "sgd"]
    types = [api_pb2.DATA_TYPE_FLOAT64, api_pb2.DATA_TYPE_STRING, api_pb2.DATA_TYPE_BOOL]
    assert [i.type for i in exp.hparam_infos] == types + [api_pb2.DATA_TYPE_FLOAT64]
    assert [m.name.tag for m in exp.metric_infos] == ["hp/acc", "hp/loss"]
    start = hp_metadata.parse_session_start_info_plugin_data(
        content[hp_metadata.SESSION_START_INFO_TAG]
    )
    hp = start.hparams
    assert (hp["lr"].number_value, hp["opt"].string_value) == (0.01, "adam")
    assert (hp["bn"].bool_value, hp["layers"].number_value) == (True, 3.0)
    end = hp_metadata.parse_session_end_info_plugin_data(content[hp_metadata.SESSION_END_INFO_TAG])
    assert end.status == api_pb2.STATUS_SUCCESS
    assert [e.value for e in acc.Scalars("hp/acc")] == [0.75]
    assert [e.value for e in acc.Scalars("hp/loss")] == [0.5]


def _pr_reference(labels, preds, weights, t):
    """TP, FP, TN, FN, precision, recall at thresholds i / (t - 1), by direct counting."""
    rows = []
    for i in range(t):
        pos = preds >= i / (t - 1)
        tp = np.sum(weights * (labels == 1) * pos)
        fp = np.sum(weights * (labels == 0) * pos)
        tn = np.sum(weights * (labels == 0) * ~pos)
        fn = np.sum(weights * (labels == 1) * ~pos)
        rows.append([tp, fp, tn, fn, tp / max(tp + fp, 1e-7), tp / max(tp + fn, 1e-7)])
    return np.array(rows).T


def test_pr_curve(tmp_path):
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 2, 300)
    preds = np.clip(0.3 * labels + 0.7 * rng.random(300), 0, 1)
    weights = rng.random(300)
    with SummaryWriter(tmp_path) as w:
        w.add_pr_curve("pr", flow.tensor(labels), flow.tensor(preds), 1, num_thresholds=11)
        w.add_pr_curve("weighted", labels, preds, 2, weights=weights)
        w.add_pr_curve_raw("raw", *_pr_reference(labels, preds, 1.0, 5), 3, num_thresholds=5)
        with pytest.raises(ValueError, match=r"add_pr_curve: 'bad': predictions must lie in"):
            w.add_pr_curve("bad", labels, preds + 1)
        with pytest.raises(ValueError, match=r"'short': labels have 300 values but predictions 2"):
            w.add_pr_curve("short", labels, preds[:2])
    acc = _acc(tmp_path)
    for tag, t, wts in (("pr", 11, 1.0), ("weighted", 127, weights), ("raw", 5, 1.0)):
        (ev,) = acc.Tensors(tag)
        got = tensor_util.make_ndarray(ev.tensor_proto)
        assert got.shape == (6, t)
        np.testing.assert_allclose(got, _pr_reference(labels, preds, wts, t), rtol=1e-5, atol=1e-4)
    assert acc.SummaryMetadata("pr").plugin_data.plugin_name == "pr_curves"


def test_pr_curve_matches_pytorch_writer():
    ts = pytest.importorskip("torch.utils.tensorboard.summary")
    from oneflow_like.utils.tensorboard import summary as ours

    rng = np.random.default_rng(3)
    labels, preds, weights = rng.integers(0, 2, 200), rng.random(200), rng.random(200)
    theirs = ts.pr_curve("p", labels, preds, num_thresholds=127, weights=weights).value[0]
    data = ours.pr_curve_data(labels, preds, 127, weights, "test", "p")
    mine = ours.pr_curve("p", data, 127).value[0]
    assert mine.metadata == theirs.metadata
    np.testing.assert_allclose(
        tensor_util.make_ndarray(mine.tensor), tensor_util.make_ndarray(theirs.tensor), rtol=1e-6
    )


def test_embedding(tmp_path):
    rng = np.random.default_rng(4)
    mat = rng.normal(size=(5, 3))
    with SummaryWriter(tmp_path) as w:
        w.add_embedding(
            flow.tensor(mat), metadata=list("abcde"), label_img=rng.random((5, 1, 4, 4))
        )
        w.add_embedding(
            mat, metadata=[[1, "x"]] * 5, metadata_header=["n", "s"], global_step=7, tag="a/b"
        )
        with pytest.raises(ValueError, match=r"add_embedding: mat must be 2-D.*\(5,\)"):
            w.add_embedding(mat[:, 0])
        with pytest.raises(ValueError, match="add_embedding: 2 metadata rows for 5 vectors"):
            w.add_embedding(mat, metadata=["a", "b"], tag="short")
    config = text_format.Parse((tmp_path / "projector_config.pbtxt").read_text(), ProjectorConfig())
    first, second = config.embeddings[0], config.embeddings[1]
    assert first.tensor_name == "default:00000" and second.tensor_name == "a/b:00007"
    back = np.loadtxt(tmp_path / first.tensor_path, delimiter="\t")
    np.testing.assert_array_equal(back, mat)  # repr() round-trips float64
    assert (tmp_path / first.metadata_path).read_text() == "a\nb\nc\nd\ne\n"
    assert list(first.sprite.single_image_dim) == [4, 4]
    assert Image.open(tmp_path / first.sprite.image_path).size == (12, 12)  # 3 x 3 thumbnails
    assert (tmp_path / second.metadata_path).read_text().splitlines() == ["n\ts"] + ["1\tx"] * 5


def test_purge_step_flush_close_and_default_log_dir(tmp_path, monkeypatch):
    w = SummaryWriter(tmp_path / "p", purge_step=40, flush_secs=3600, max_queue=1000)
    w.add_scalar("s", 1.0, 41)
    w.flush()  # readable before close
    events = _events(tmp_path / "p")
    assert events[0].file_version == "brain.Event:2"
    assert (events[1].step, events[1].file_version) == (40, "brain.Event:2")
    assert (events[2].step, events[2].session_log.status) == (40, 1)  # SessionLog.START
    assert (events[3].step, events[3].summary.value[0].simple_value) == (41, 1.0)
    w.close()
    w.close()  # twice is harmless
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_lr0.1", filename_suffix=".v2") as w:
        log_dir = w.get_logdir()
        with pytest.raises(NotImplementedError, match="add_graph.*Linear"):
            w.add_graph(flow.nn.Linear(2, 2), flow.ones(1, 2))
    assert log_dir.startswith("runs" + os.sep) and log_dir.endswith("_lr0.1")
    (name,) = os.listdir(log_dir)
    assert name.startswith("events.out.tfevents.") and name.endswith(".v2")


def test_mock_torch_imports_summary_writer(tmp_path):
    from oneflow_like import mock_torch

    with mock_torch.enable():
        from torch.utils.tensorboard import SummaryWriter as TorchSummaryWriter

        with TorchSummaryWriter(tmp_path) as w:
            w.add_scalar("x", 1.5, 2)
    assert TorchSummaryWriter is SummaryWriter
    assert [(e.step, e.value) for e in _acc(tmp_path).Scalars("x")] == [(2, 1.5)]
