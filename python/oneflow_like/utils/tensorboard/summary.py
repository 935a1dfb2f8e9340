"""Summary protos for SummaryWriter, built with the `tensorboard` package's protos and plugin
metadata helpers, in the layouts TensorBoard's plugins read (the same ones PyTorch writes).
Inputs (our tensors, NumPy arrays, Python numbers) become NumPy arrays at the boundary
(make_np); nothing here touches the runtime otherwise."""
import io
import numbers

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary
from tensorboard.compat.proto import types_pb2
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.custom_scalar import metadata as custom_scalar_metadata
from tensorboard.plugins.hparams import api_pb2
from tensorboard.plugins.hparams import metadata as hparams_metadata
from tensorboard.plugins.hparams import plugin_data_pb2 as hparams_plugin_data
from tensorboard.plugins.pr_curve import metadata as pr_curve_metadata
from tensorboard.plugins.scalar import metadata as scalar_metadata
from tensorboard.plugins.text import metadata as text_metadata
from tensorboard.util import tensor_util


def make_np(x, who):
    """`x` (our Tensor, a NumPy array, a number or nested list, or anything with .numpy())
    as a NumPy array; TypeError naming `who` otherwise."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, (numbers.Number, np.generic, list, tuple)):
        return np.asarray(x)
    if hasattr(x, "detach") and hasattr(x, "numpy"):
        x = x.detach()
        if hasattr(x, "dtype") and str(x.dtype).endswith(("bfloat16", "float16")):
            x = x.float()
        return np.asarray(x.cpu().numpy())
    raise TypeError(f"{who}: expected a tensor, NumPy array or number, got {type(x).__name__}")


def _value_summary(tag, **value_fields):
    return Summary(value=[Summary.Value(tag=tag, **value_fields)])


def scalar(tag, value, new_style=False, double_precision=False, who="SummaryWriter.add_scalar"):
    arr = make_np(value, who)
    if arr.size != 1:
        raise ValueError(f"{who}: {tag!r} needs a single value, got shape {tuple(arr.shape)}")
    v = float(arr.reshape(()))
    if not new_style:
        return _value_summary(tag, simple_value=v)
    dtype = types_pb2.DT_DOUBLE if double_precision else types_pb2.DT_FLOAT
    tensor = tensor_util.make_tensor_proto(v, dtype=dtype, shape=[])
    meta = scalar_metadata.create_summary_metadata(display_name="", description="")
    return _value_summary(tag, tensor=tensor, metadata=meta)


def _tensorflow_bins():
    """TensorFlow's default histogram edges: +-1e-12 growing by 10% up to 1e20, and 0."""
    pos = 1e-12 * 1.1 ** np.arange(int(np.ceil(np.log(1e32) / np.log(1.1))))
    pos = pos[pos < 1e20]
    return np.concatenate([-pos[::-1], [0.0], pos])


def histogram_proto(values, bins, max_bins, who, tag):
    values = make_np(values, who).astype(np.float64).reshape(-1)
    if values.size == 0:
        raise ValueError(f"{who}: {tag!r} has no values")
    if not np.isfinite(values).all():
        raise ValueError(f"{who}: {tag!r} holds NaN or infinite values")
    if isinstance(bins, str) and bins == "tensorflow":
        bins = _tensorflow_bins()
    counts, edges = np.histogram(values, bins=bins)
    if max_bins is not None and counts.size > max_bins:
        group = -(-counts.size // max_bins)  # merge `group` neighbouring bins into one
        pad = (-counts.size) % group
        counts = np.concatenate([counts, np.zeros(pad, counts.dtype)]).reshape(-1, group).sum(1)
        edges = np.append(edges[:-1:group], edges[-1])
    used = np.flatnonzero(counts)
    if used.size == 0:  # every value fell outside explicit bins
        raise ValueError(f"{who}: {tag!r}: no value lies inside the given bins")
    lo, hi = used[0], used[-1]
    # TensorBoard stores right edges only: an empty first bucket carries the left edge.
    return HistogramProto(
        min=values.min(),
        max=values.max(),
        num=values.size,
        sum=values.sum(),
        sum_squares=values.dot(values),
        bucket_limit=edges[lo : hi + 2].tolist(),
        bucket=[0.0] + counts[lo : hi + 1].astype(np.float64).tolist(),
    )


def histogram(tag, values, bins, max_bins=None):
    return _value_summary(
        tag, histo=histogram_proto(values, bins, max_bins, "SummaryWriter.add_histogram", tag)
    )


def histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):
    if len(bucket_limits) != len(bucket_counts):
        raise ValueError(
            f"SummaryWriter.add_histogram_raw: {tag!r} has {len(bucket_limits)} bucket_limits "
            f"but {len(bucket_counts)} bucket_counts"
        )
    proto = HistogramProto(
        min=min,
        max=max,
        num=num,
        sum=sum,
        sum_squares=sum_squares,
        bucket_limit=make_np(bucket_limits, "add_histogram_raw").tolist(),
        bucket=make_np(bucket_counts, "add_histogram_raw").tolist(),
    )
    return _value_summary(tag, histo=proto)


def to_hwc(arr, dataformats, who, tag):
    """Reorders an image (or a batch: N makes a grid, 8 images a row) to HWC with C in 1,3,4
    (one channel becomes three)."""
    fmt = dataformats.upper()
    if len(fmt) != arr.ndim or len(set(fmt)) != len(fmt) or not set(fmt) <= set("NCHW"):
        raise ValueError(
            f"{who}: {tag!r}: dataformats {dataformats!r} does not describe an image of shape "
            f"{tuple(arr.shape)} (use letters N, C, H, W, one per dimension)"
        )
    if "H" not in fmt or "W" not in fmt:
        raise ValueError(f"{who}: {tag!r}: dataformats {dataformats!r} needs H and W")
    order = [fmt.index(c) for c in "NHWC" if c in fmt]
    arr = arr.transpose(order)
    if "C" not in fmt:
        arr = arr[..., None]
    if "N" not in fmt:
        arr = arr[None]
    n, h, w, c = arr.shape
    if c not in (1, 3, 4):
        raise ValueError(f"{who}: {tag!r}: images need 1, 3 or 4 channels, got {c}")
    if c == 1:
        arr = np.repeat(arr, 3, axis=3)
    return arr[0] if n == 1 else grid(arr, min(n, 8))


def grid(nhwc, cols, rows=None):
    """Images (NHWC) tiled row by row, `cols` a row, on a black canvas of `rows` rows
    (default: as many as needed)."""
    n, h, w, c = nhwc.shape
    rows = -(-n // cols) if rows is None else rows
    canvas = np.zeros((rows * h, cols * w, c), nhwc.dtype)
    for i in range(n):
        r, k = divmod(i, cols)
        canvas[r * h : (r + 1) * h, k * w : (k + 1) * w] = nhwc[i]
    return canvas


def to_uint8(hwc):
    """Floats are taken in [0, 1] and scaled to 0..255 (rounded, clipped); uint8 as is."""
    if hwc.dtype == np.uint8:
        return hwc
    return np.clip(np.rint(hwc.astype(np.float64) * 255.0), 0, 255).astype(np.uint8)


def encode_png(hwc):
    """uint8 HWC (C = 3 or 4) as PNG bytes."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(hwc)).save(buf, "PNG")  # RGB or RGBA by C
    return buf.getvalue()


def image(tag, img, dataformats, who="SummaryWriter.add_image"):
    hwc = to_uint8(to_hwc(make_np(img, who), dataformats, who, tag))
    h, w, c = hwc.shape
    proto = Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=encode_png(hwc))
    return _value_summary(tag, image=proto)


def figure_to_chw(figure, close):
    """A matplotlib figure rendered by the Agg backend, as a uint8 RGB CHW array."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba())
    if close:
        import matplotlib.pyplot as plt

        plt.close(figure)
    return np.ascontiguousarray(rgba[:, :, :3].transpose(2, 0, 1))


def audio(tag, snd, sample_rate, who="SummaryWriter.add_audio"):
    """Samples in [-1, 1] (clipped), shape (L,), (1, L) or (C, L), as 16-bit PCM WAV."""
    import wave

    arr = make_np(snd, who).astype(np.float64)
    arr = arr[None] if arr.ndim == 1 else arr
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise ValueError(f"{who}: {tag!r}: expected samples (L,) or (C, L), got {arr.shape}")
    pcm = np.rint(np.clip(arr, -1.0, 1.0) * 32767).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as wav:
        wav.setnchannels(pcm.shape[0])
        wav.setsampwidth(2)
        wav.setframerate(int(sample_rate))
        wav.writeframes(np.ascontiguousarray(pcm.T).tobytes())  # frames interleave channels
    proto = Summary.Audio(
        sample_rate=float(sample_rate),
        num_channels=pcm.shape[0],
        length_frames=pcm.shape[1],
        encoded_audio_string=buf.getvalue(),
        content_type="audio/wav",
    )
    return _value_summary(tag, audio=proto)


def custom_scalars(layout, who="SummaryWriter.add_custom_scalars"):
    """layout: {category: {chart title: ["Multiline", [tags]] or ["Margin", [value tag,
    lower tag, upper tag]]}}, the custom scalars plugin's charts."""
    categories = []
    for title, charts in layout.items():
        cat = layout_pb2.Category(title=title)
        for chart_title, (kind, tags) in charts.items():
            chart = cat.chart.add(title=chart_title)
            if kind == "Multiline":
                chart.multiline.tag.extend(tags)
            elif kind == "Margin":
                if len(tags) != 3:
                    raise ValueError(
                        f"{who}: chart {chart_title!r}: Margin needs [value, lower, upper] tags"
                    )
                chart.margin.series.add(value=tags[0], lower=tags[1], upper=tags[2])
            else:
                raise ValueError(
                    f"{who}: chart {chart_title!r}: kind must be 'Multiline' or 'Margin', "
                    f"got {kind!r}"
                )
        categories.append(cat)
    content = layout_pb2.Layout(category=categories).SerializeToString()
    return _value_summary(
        custom_scalar_metadata.CONFIG_SUMMARY_TAG,
        tensor=tensor_util.make_tensor_proto(content, dtype=types_pb2.DT_STRING),
        metadata=custom_scalar_metadata.create_summary_metadata(),
    )


def text(tag, text_string):
    tensor = tensor_util.make_tensor_proto([str(text_string).encode("utf-8")], shape=[1])
    meta = text_metadata.create_summary_metadata(display_name="", description="")
    return _value_summary(tag + "/text_summary", tensor=tensor, metadata=meta)


def pr_curve_data(labels, predictions, num_thresholds, weights, who, tag):
    """[6, num_thresholds]: TP, FP, TN, FN, precision, recall at thresholds i/(T-1): a
    prediction counts as positive at threshold i when floor(p * (T-1)) >= i."""
    labels = make_np(labels, who).reshape(-1)
    preds = make_np(predictions, who).astype(np.float64).reshape(-1)
    if labels.shape != preds.shape:
        raise ValueError(
            f"{who}: {tag!r}: labels have {labels.size} values but predictions {preds.size}"
        )
    if preds.size and (preds.min() < 0 or preds.max() > 1):
        raise ValueError(f"{who}: {tag!r}: predictions must lie in [0, 1]")
    w = 1.0 if weights is None else make_np(weights, who).astype(np.float64).reshape(-1)
    pos = labels.astype(bool).astype(np.float64) * w
    neg = (1.0 - labels.astype(bool).astype(np.float64)) * w
    idx = np.floor(preds * (num_thresholds - 1)).astype(np.int64)
    tp = np.bincount(idx, pos * np.ones_like(preds), num_thresholds)[::-1].cumsum()[::-1]
    fp = np.bincount(idx, neg * np.ones_like(preds), num_thresholds)[::-1].cumsum()[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(tp + fp, 1e-7)
    recall = tp / np.maximum(tp + fn, 1e-7)
    return np.stack([tp, fp, tn, fn, precision, recall])


def pr_curve(tag, data, num_thresholds):
    data = np.asarray(data, np.float32)
    tensor = tensor_util.make_tensor_proto(data, dtype=types_pb2.DT_FLOAT)
    meta = pr_curve_metadata.create_summary_metadata(
        display_name="", description="", num_thresholds=num_thresholds
    )
    return _value_summary(tag, tensor=tensor, metadata=meta)


def _hparam_value(name, v, who):
    """An hparam as a google.protobuf Value field: (field name, value, HParamInfo type)."""
    if isinstance(v, (bool, np.bool_)):
        return "bool_value", bool(v), api_pb2.DATA_TYPE_BOOL
    if isinstance(v, str):
        return "string_value", v, api_pb2.DATA_TYPE_STRING
    if isinstance(v, (numbers.Number, np.generic)) or hasattr(v, "numpy"):
        arr = make_np(v, who)
        if arr.size == 1:
            return "number_value", float(arr.reshape(())), api_pb2.DATA_TYPE_FLOAT64
    raise ValueError(
        f"{who}: hparam {name!r} = {v!r}: values must be int, float, str, bool or a "
        "one-element tensor"
    )


def hparams(hparam_dict, metric_dict, hparam_domain_discrete=None, who="add_hparams"):
    """The three summaries of TensorBoard's HParams plugin: experiment (the hparams, their
    types and discrete domains, the metric tags), session start (this run's values) and
    session end."""
    domains = hparam_domain_discrete or {}
    for k, vals in domains.items():
        if k not in hparam_dict:
            raise ValueError(f"{who}: hparam_domain_discrete names {k!r}, not in hparam_dict")
        if not isinstance(vals, (list, tuple)):
            raise TypeError(f"{who}: hparam_domain_discrete[{k!r}] must be a list")
    start = hparams_plugin_data.SessionStartInfo()
    infos = []
    for k, v in hparam_dict.items():
        field, value, dtype = _hparam_value(k, v, who)
        setattr(start.hparams[k], field, value)
        info = api_pb2.HParamInfo(name=k, type=dtype)
        if k in domains:
            for d in domains[k]:
                d_field, d_value, d_type = _hparam_value(k, d, who)
                if d_type != dtype:
                    raise ValueError(
                        f"{who}: hparam_domain_discrete[{k!r}] holds {d!r}, not of the type "
                        f"of {v!r}"
                    )
                setattr(info.domain_discrete.values.add(), d_field, d_value)
        infos.append(info)
    metrics = [api_pb2.MetricInfo(name=api_pb2.MetricName(tag=k)) for k in metric_dict]
    experiment = api_pb2.Experiment(hparam_infos=infos, metric_infos=metrics)
    end = hparams_plugin_data.SessionEndInfo(status=api_pb2.STATUS_SUCCESS)

    def wrap(tag, **data):
        meta = hparams_metadata.create_summary_metadata(
            hparams_plugin_data.HParamsPluginData(**data)
        )
        return _value_summary(tag, metadata=meta)

    return (
        wrap(hparams_metadata.EXPERIMENT_TAG, experiment=experiment),
        wrap(hparams_metadata.SESSION_START_INFO_TAG, session_start_info=start),
        wrap(hparams_metadata.SESSION_END_INFO_TAG, session_end_info=end),
    )
