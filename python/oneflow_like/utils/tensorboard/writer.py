"""SummaryWriter: torch.utils.tensorboard.SummaryWriter on oneflow_like. Events go to
`tensorboard`'s EventFileWriter (a queue flushed by a thread every flush_secs or max_queue
events), one event file per directory; add_scalars and add_hparams write to subdirectories."""
import os
import socket
import time
from datetime import datetime

import numpy as np
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from . import summary as _s


class FileWriter:
    """One event file in `log_dir`: Summary protos in, Events (wall time, step) out."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self._log_dir = str(log_dir)
        self.event_writer = EventFileWriter(self._log_dir, max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        return self._log_dir

    def add_event(self, event, step=None, walltime=None):
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()

    def reopen(self):
        self.event_writer.reopen()


class SummaryWriter:
    """Writes TensorBoard event files under log_dir (default runs/<date>_<host><comment>).
    purge_step: TensorBoard drops events at or after this step from earlier runs of the
    same directory (for resuming after a crash)."""

    def __init__(
        self,
        log_dir=None,
        comment="",
        purge_step=None,
        max_queue=10,
        flush_secs=120,
        filename_suffix="",
    ):
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = os.fspath(log_dir)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()

    def _get_file_writer(self):
        if self.file_writer is None:
            self.file_writer = FileWriter(
                self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix
            )
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                step = self.purge_step
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                start = SessionLog(status=SessionLog.START)
                self.file_writer.add_event(Event(step=step, session_log=start))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    def _add(self, summary, global_step, walltime):
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalar(
        self,
        tag,
        scalar_value,
        global_step=None,
        walltime=None,
        new_style=False,
        double_precision=False,
    ):
        """new_style: a tensor summary (the scalars plugin's own format) instead of a
        simple_value; double_precision keeps it in float64."""
        self._add(_s.scalar(tag, scalar_value, new_style, double_precision), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Each scalar goes to its own run, log_dir/<main_tag>_<tag>, under the tag main_tag,
        so TensorBoard draws them in one chart."""
        walltime = time.time() if walltime is None else walltime
        base = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            run_dir = os.path.join(base, f"{main_tag.replace('/', '_')}_{tag}")
            writer = self.all_writers.get(run_dir)
            if writer is None:
                writer = FileWriter(run_dir, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[run_dir] = writer
            who = "SummaryWriter.add_scalars"
            writer.add_summary(_s.scalar(main_tag, value, who=who), global_step, walltime)

    def add_histogram(
        self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None
    ):
        """bins: 'tensorflow' (TensorFlow's exponential buckets), or anything np.histogram
        takes ('auto', 'fd', an int, edges)."""
        self._add(_s.histogram(tag, values, bins, max_bins), global_step, walltime)

    def add_histogram_raw(
        self,
        tag,
        min,
        max,
        num,
        sum,
        sum_squares,
        bucket_limits,
        bucket_counts,
        global_step=None,
        walltime=None,
    ):
        proto = _s.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts)
        self._add(proto, global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """img_tensor: float in [0, 1] or uint8; dataformats CHW, HWC or HW (one channel
        shows as grey)."""
        self._add(_s.image(tag, img_tensor, dataformats), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch (NCHW or NHWC) shown as one grid image, 8 images a row."""
        who = "SummaryWriter.add_images"
        self._add(_s.image(tag, img_tensor, dataformats, who), global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure (or a list of them, shown as a grid), rendered with Agg."""
        if isinstance(figure, (list, tuple)):
            chw = np.stack([_s.figure_to_chw(f, close) for f in figure])
            self.add_images(tag, chw, global_step, walltime, dataformats="NCHW")
        else:
            self.add_image(tag, _s.figure_to_chw(figure, close), global_step, walltime, "CHW")

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        """Samples in [-1, 1] (clipped), mono (L,) / (1, L) or channels-first (C, L)."""
        self._add(_s.audio(tag, snd_tensor, sample_rate), global_step, walltime)

    def add_custom_scalars(self, layout):
        """Charts of the custom scalars plugin, e.g. {"Loss": {"both": ["Multiline",
        ["loss/train", "loss/val"]]}}."""
        self._add(_s.custom_scalars(layout), None, None)

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        self.add_custom_scalars({category: {title: ["Multiline", tags]}})

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        self.add_custom_scalars({category: {title: ["Margin", tags]}})

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Markdown text, shown by the text plugin under `tag`."""
        self._add(_s.text(tag, text_string), global_step, walltime)

    def add_pr_curve(
        self,
        tag,
        labels,
        predictions,
        global_step=None,
        num_thresholds=127,
        weights=None,
        walltime=None,
    ):
        """labels: 0/1 (or bool); predictions: probabilities in [0, 1]."""
        num_thresholds = min(int(num_thresholds), 127)
        if num_thresholds < 2:
            raise ValueError(f"SummaryWriter.add_pr_curve: {tag!r}: num_thresholds must be >= 2")
        data = _s.pr_curve_data(
            labels, predictions, num_thresholds, weights, "SummaryWriter.add_pr_curve", tag
        )
        self._add(_s.pr_curve(tag, data, num_thresholds), global_step, walltime)

    def add_pr_curve_raw(
        self,
        tag,
        true_positive_counts,
        false_positive_counts,
        true_negative_counts,
        false_negative_counts,
        precision,
        recall,
        global_step=None,
        num_thresholds=127,
        weights=None,
        walltime=None,
    ):
        """The six curves already computed, each of num_thresholds values (weights: unused,
        as in PyTorch)."""
        num_thresholds = min(int(num_thresholds), 127)
        rows = [
            true_positive_counts,
            false_positive_counts,
            true_negative_counts,
            false_negative_counts,
            precision,
            recall,
        ]
        who = "SummaryWriter.add_pr_curve_raw"
        rows = [_s.make_np(r, who).astype(np.float64).reshape(-1) for r in rows]
        if any(r.size != num_thresholds for r in rows):
            sizes = [r.size for r in rows]
            raise ValueError(f"{who}: {tag!r}: curves have sizes {sizes}, not {num_thresholds}")
        self._add(_s.pr_curve(tag, np.stack(rows), num_thresholds), global_step, walltime)

    def add_hparams(
        self,
        hparam_dict,
        metric_dict,
        hparam_domain_discrete=None,
        run_name=None,
        global_step=None,
    ):
        """One HParams-plugin session in log_dir/<run_name> (default: the time), with each
        metric also written there as a scalar."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError(
                "SummaryWriter.add_hparams: hparam_dict and metric_dict should be dicts"
            )
        summaries = _s.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        run_dir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=run_dir) as w:
            for proto in summaries:
                w.file_writer.add_summary(proto, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    def add_embedding(
        self,
        mat,
        metadata=None,
        label_img=None,
        global_step=None,
        tag="default",
        metadata_header=None,
    ):
        """Vectors for TensorBoard's projector, with per-row metadata (labels, or rows of
        columns named by metadata_header) and per-row thumbnails label_img (NCHW)."""
        from . import _embedding

        _embedding.write(
            self._get_file_writer().get_logdir(),
            mat,
            metadata,
            label_img,
            0 if global_step is None else global_step,
            tag,
            metadata_header,
        )

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        raise NotImplementedError(
            "SummaryWriter.add_graph is not supported by oneflow_like: TensorBoard's graph "
            "view needs a TorchScript-style trace converted to a GraphDef, which oneflow_like "
            f"does not produce (model {type(model).__name__}); export with flow.onnx.export "
            "and view the .onnx file in Netron instead"
        )

    def flush(self):
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self):
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
