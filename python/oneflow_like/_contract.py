"""Tensor contractions composed from views, sums and batched matmuls: einsum, tensordot and
diagonal (torch semantics). Every step is an ordinary op, so gradients, nn.Graph and every device
come with them; contractions become one bmm per pair of operands (left to right)."""
import oneflow_like as flow


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of the (dim1, dim2) planes as a new last dim (a view of a contiguous copy)."""
    nd = input.dim()
    d1, d2 = dim1 % nd if nd else dim1, dim2 % nd if nd else dim2
    if nd < 2 or not (-nd <= dim1 < nd and -nd <= dim2 < nd):
        raise IndexError(f"[diagonal] dims ({dim1}, {dim2}) out of range for {nd}-D input")
    if d1 == d2:
        raise RuntimeError(f"[diagonal] dim1 and dim2 cannot be identical: {dim1}, {dim2}")
    x = input.contiguous()
    shape, strides = list(x.shape), list(x.stride())
    if offset >= 0:
        n = max(0, min(shape[d1], shape[d2] - offset))
        start = offset * strides[d2] if n else 0
    else:
        n = max(0, min(shape[d1] + offset, shape[d2]))
        start = -offset * strides[d1] if n else 0
    keep = [i for i in range(nd) if i not in (d1, d2)]
    size = [shape[i] for i in keep] + [n]
    stride = [strides[i] for i in keep] + [strides[d1] + strides[d2]]
    return x.as_strided(size, stride, x.storage_offset() + start)


def _parse(equation, operands):
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(
            f"einsum(): {len(terms)} operand subscripts in '{equation}' for {len(operands)} operands"
        )
    # The dims an ellipsis covers get labels outside a-zA-Z (chr(0x100 + i)), right-aligned.
    ell_dims = 0
    parsed = []
    for t, op in zip(terms, operands):
        if t.count("...") > 1 or "." in t.replace("...", ""):
            raise ValueError(f"einsum(): invalid ellipsis in '{t}'")
        for ch in t.replace("...", ""):
            if not ch.isalpha():
                raise ValueError(f"einsum(): invalid subscript '{ch}' in '{equation}'")
        n_ell = op.dim() - len(t.replace("...", ""))
        if "..." in t:
            if n_ell < 0:
                raise ValueError(
                    f"einsum(): '{t}' has more subscripts than operand dims {op.dim()}"
                )
            ell_dims = max(ell_dims, n_ell)
        elif n_ell != 0:
            raise ValueError(
                f"einsum(): subscripts '{t}' ({len(t)}) do not match the operand's {op.dim()} dims"
            )
        parsed.append((t, n_ell))
    ell = [chr(0x100 + i) for i in range(ell_dims)]
    labels = []
    for t, n_ell in parsed:
        pre, _, post = t.partition("...")
        labels.append(list(pre) + (ell[ell_dims - n_ell :] if "..." in t else []) + list(post))
    if arrow:
        if rhs.count("...") > 1:
            raise ValueError(f"einsum(): invalid output subscripts '{rhs}'")
        pre, dots, post = rhs.partition("...")
        out = list(pre) + (ell if dots else []) + list(post)
        for ch in pre + post:
            if not any(ch in lab for lab in labels):
                raise ValueError(f"einsum(): output subscript '{ch}' does not appear in the input")
        if len(set(out)) != len(out):
            raise ValueError(f"einsum(): output subscript repeated in '{rhs}'")
    else:  # implicit form: ellipsis dims, then the labels seen once, alphabetically
        counts = {}
        for lab in labels:
            for ch in lab:
                counts[ch] = counts.get(ch, 0) + 1
        out = ell + sorted(ch for ch, c in counts.items() if c == 1 and ch not in ell)
    return labels, out


def _take_diagonals(x, lab):
    """Repeated labels within one operand ('ii') become one dim holding their diagonal."""
    while True:
        seen = {}
        for i, ch in enumerate(lab):
            if ch in seen:
                j = seen[ch]
                x = diagonal(x, 0, j, i)  # the diagonal goes last
                lab = [c for k, c in enumerate(lab) if k not in (i, j)] + [ch]
                break
            seen[ch] = i
        else:
            return x, lab


def _sum_out(x, lab, keep):
    dims = [i for i, ch in enumerate(lab) if ch not in keep]
    if dims:
        x = x.sum(dims)
        lab = [ch for ch in lab if ch in keep]
    return x, lab


def _contract(a, la, b, lb, keep):
    """a (labels la) x b (labels lb) -> (result, labels): batch labels are shared and kept,
    contracted ones shared and not kept; the rest stay with their operand."""
    sizes = {}
    for x, lab in ((a, la), (b, lb)):
        for ch, n in zip(lab, x.shape):
            if sizes.get(ch, 1) != 1 and n not in (1, sizes[ch]):
                raise RuntimeError(
                    f"einsum(): subscript '{ch}' has size {n} for one operand and {sizes[ch]} "
                    "for another"
                )
            sizes[ch] = max(sizes.get(ch, 1), n)
    batch = [ch for ch in la if ch in lb and ch in keep]
    contracted = [ch for ch in la if ch in lb and ch not in keep]
    a_only = [ch for ch in la if ch not in lb]
    b_only = [ch for ch in lb if ch not in la]
    # Broadcast size-1 dims of shared labels, then lay out as (batch, M, K) @ (batch, K, N).
    a = a.permute([la.index(ch) for ch in batch + a_only + contracted])
    b = b.permute([lb.index(ch) for ch in batch + contracted + b_only])
    a = a.expand([sizes[ch] for ch in batch + a_only + contracted])
    b = b.expand([sizes[ch] for ch in batch + contracted + b_only])
    prod = lambda chs: int(_prod(sizes[ch] for ch in chs))  # noqa: E731
    B, M, K, N = prod(batch), prod(a_only), prod(contracted), prod(b_only)
    r = flow.bmm(a.reshape(B, M, K), b.reshape(B, K, N))
    r = r.reshape([sizes[ch] for ch in batch + a_only + b_only])
    return r, batch + a_only + b_only


def _prod(xs):
    p = 1
    for v in xs:
        p *= v
    return p


def einsum(equation, *operands):
    """torch.einsum: explicit ('ij,jk->ik') and implicit ('ij,jk') forms, '...' broadcasting,
    repeated subscripts (diagonals), sums over labels not in the output."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum(): must provide at least one operand")
    labels, out = _parse(equation, operands)
    xs = []
    for x, lab in zip(operands, labels):
        x, lab = _take_diagonals(x, lab)
        xs.append((x, lab))
    # Sum away labels that appear in one operand only and not in the output.
    for i, (x, lab) in enumerate(xs):
        others = set(out)
        for j, (_, l2) in enumerate(xs):
            if j != i:
                others.update(l2)
        xs[i] = _sum_out(x, lab, others)
    x, lab = xs[0]
    for k in range(1, len(xs)):
        y, ly = xs[k]
        keep = set(out)
        for _, l2 in xs[k + 1 :]:
            keep.update(l2)
        x, lab = _contract(x, lab, y, ly, keep)
    x, lab = _sum_out(x, lab, set(out))
    if lab != out:
        x = x.permute([lab.index(ch) for ch in out])
    return x


def tensordot(a, b, dims=2):
    """torch.tensordot: contract the last `dims` dims of a with the first of b, or the listed
    pairs dims=([a dims], [b dims])."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        da, db = [list(d) if isinstance(d, (list, tuple)) else [d] for d in dims]
    da, db = [d % a.dim() for d in da], [d % b.dim() for d in db]
    if len(da) != len(db):
        raise RuntimeError(f"both dimension lists should have same length, got {da} and {db}")
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a.shape[i]} in dim "
                f"{i} and second has size {b.shape[j]} in dim {j}"
            )
    fa = [i for i in range(a.dim()) if i not in da]
    fb = [j for j in range(b.dim()) if j not in db]
    K = _prod(a.shape[i] for i in da)
    am = a.permute(fa + da).reshape(_prod(a.shape[i] for i in fa), K)
    bm = b.permute(db + fb).reshape(K, _prod(b.shape[j] for j in fb))
    return flow.matmul(am, bm).reshape([a.shape[i] for i in fa] + [b.shape[j] for j in fb])


flow.Tensor.diagonal = diagonal
