"""SummaryWriter.add_embedding: the files TensorBoard's projector reads from a log directory.
<log_dir>/<step:05d>/<tag>/ holds tensors.tsv (one row a line, tab-separated), metadata.tsv
and sprite.png (thumbnails in a square grid); <log_dir>/projector_config.pbtxt gets one
`embeddings { ... }` entry (a ProjectorConfig in text format) pointing at them."""
import os
from urllib.parse import quote

import numpy as np
from google.protobuf import text_format
from tensorboard.plugins.projector import metadata as projector_metadata
from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo

from . import summary as _s

_WHO = "SummaryWriter.add_embedding"


def _write_metadata(path, metadata, header, rows):
    metadata = list(metadata)
    if len(metadata) != rows:
        raise ValueError(f"{_WHO}: {len(metadata)} metadata rows for {rows} vectors")
    with open(path, "w", encoding="utf-8") as f:
        if header is None:
            f.writelines(f"{m}\n" for m in metadata)
            return
        f.write("\t".join(str(h) for h in header) + "\n")
        for row in metadata:
            if len(row) != len(header):
                raise ValueError(f"{_WHO}: metadata row {row!r} has not {len(header)} columns")
            f.write("\t".join(str(c) for c in row) + "\n")


def _write_sprite(path, label_img, rows):
    """label_img: NCHW; the thumbnails in a square grid; returns [width, height] of one."""
    imgs = _s.make_np(label_img, _WHO)
    if imgs.ndim != 4 or imgs.shape[0] != rows:
        raise ValueError(
            f"{_WHO}: label_img must be NCHW with N = {rows}, got shape {tuple(imgs.shape)}"
        )
    # to_hwc validates the channels and makes grey images RGB.
    nhwc = np.stack([_s.to_hwc(im[None], "NCHW", _WHO, "label_img") for im in imgs])
    side = int(np.ceil(np.sqrt(rows)))
    with open(path, "wb") as f:
        f.write(_s.encode_png(_s.to_uint8(_s.grid(nhwc, side, side))))
    return [nhwc.shape[2], nhwc.shape[1]]


def write(log_dir, mat, metadata, label_img, global_step, tag, metadata_header):
    mat = _s.make_np(mat, _WHO)
    if mat.ndim != 2:
        raise ValueError(f"{_WHO}: mat must be 2-D (N, D), got shape {tuple(mat.shape)}")
    subdir = f"{int(global_step):05d}/{quote(tag, safe='')}"
    save_path = os.path.join(log_dir, subdir)
    os.makedirs(save_path, exist_ok=True)
    info = EmbeddingInfo(
        tensor_name=f"{tag}:{int(global_step):05d}",
        tensor_path=f"{subdir}/tensors.tsv",
    )
    if metadata is not None:
        _write_metadata(
            os.path.join(save_path, "metadata.tsv"), metadata, metadata_header, len(mat)
        )
        info.metadata_path = f"{subdir}/metadata.tsv"
    if label_img is not None:
        dim = _write_sprite(os.path.join(save_path, "sprite.png"), label_img, len(mat))
        info.sprite.image_path = f"{subdir}/sprite.png"
        info.sprite.single_image_dim.extend(dim)
    with open(os.path.join(save_path, "tensors.tsv"), "w") as f:
        for row in mat.astype(np.float64):
            f.write("\t".join(repr(float(x)) for x in row) + "\n")
    with open(os.path.join(log_dir, projector_metadata.PROJECTOR_FILENAME), "a") as f:
        f.write("embeddings {\n" + text_format.MessageToString(info) + "}\n")
