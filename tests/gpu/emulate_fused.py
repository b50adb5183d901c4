"""Emulates slots_embed_fused (wip/fused-embed) in numpy, thread by thread: a tile of rows per
block, the shared buffers [values | tangents] x [width][ld], FUSED_RG rows per thread, partial
last tiles, the resnet skips; and checks its G (values and tangents) against a naive per-input
evaluation. Run with /root/dpenv/bin/python (numpy)."""
import numpy as np

RG = 8
rng = np.random.default_rng(3)


def make_net(widths, idt=True, bias=True):
    return [dict(w=rng.normal(size=(widths[l], widths[l + 1])) * 0.6,
                 b=rng.normal(size=widths[l + 1]) if bias else None,
                 idt=rng.normal(size=widths[l + 1]) * 0.3 + 1 if idt else None,
                 n_in=widths[l], n_out=widths[l + 1]) for l in range(len(widths) - 1)]


def resnet(lay):
    return "same" if lay["n_out"] == lay["n_in"] else "double" if lay["n_out"] == 2 * lay["n_in"] else None


def naive(net, s):
    v, t = np.array([s]), np.array([1.0])
    for lay in net:
        z = v @ lay["w"] + (lay["b"] if lay["b"] is not None else 0)
        a = np.tanh(z)
        da = (1 - a * a) * (t @ lay["w"])
        if lay["idt"] is not None:
            a, da = a * lay["idt"], da * lay["idt"]
        if resnet(lay) == "same":
            a, da = a + v, da + t
        elif resnet(lay) == "double":
            a, da = a + np.concatenate([v, v]), da + np.concatenate([t, t])
        v, t = a, da
    return v, t


def fused(net, s, tile, threads, pad):
    n, M = len(s), net[-1]["n_out"]
    maxw = max(l["n_out"] for l in net)
    ld = tile + pad
    out = np.full(2 * n * M, np.nan)
    for block in range((n + tile - 1) // tile):
        buf = [np.full(2 * maxw * ld, np.nan), np.full(2 * maxw * ld, np.nan)]
        row0 = block * tile
        rows = min(tile, n - row0)
        L = net[0]
        for e in range(L["n_out"] * tile):          # first layer, every thread's items
            o, r = e // tile, e % tile
            x = s[row0 + r] if r < rows else 0.0
            w = L["w"].ravel()
            z = x * w[o] + (L["b"][o] if L["b"] is not None else 0)
            a = np.tanh(z)
            t = (1 - a * a) * w[o]
            if L["idt"] is not None:
                a, t = a * L["idt"][o], t * L["idt"][o]
            if resnet(L):
                a, t = a + x, t + 1
            if len(net) == 1:
                if r < rows:
                    out[(row0 + r) * L["n_out"] + o] = a
                    out[(n + row0 + r) * L["n_out"] + o] = t
            else:
                buf[0][o * ld + r] = a
                buf[0][(L["n_out"] + o) * ld + r] = t
        for l in range(1, len(net)):
            L = net[l]
            last = l == len(net) - 1
            src, dst = (buf[0], buf[1]) if l & 1 else (buf[1], buf[0])
            ni, no = L["n_in"], L["n_out"]
            groups = (rows + RG - 1) // RG
            w = L["w"].ravel()
            for tid in range(threads):
                for e in range(tid, no * groups, threads):
                    o, r0 = e % no, (e // no) * RG
                    z = np.full(RG, L["b"][o] if L["b"] is not None else 0.0)
                    dz = np.zeros(RG)
                    for q in range(ni):
                        wq = w[q * no + o]
                        z += src[q * ld + r0:q * ld + r0 + RG] * wq
                        dz += src[(ni + q) * ld + r0:(ni + q) * ld + r0 + RG] * wq
                    oi = o if resnet(L) == "same" else o % ni
                    for i in range(RG):
                        r = r0 + i
                        a = np.tanh(z[i])
                        t = (1 - a * a) * dz[i]
                        if L["idt"] is not None:
                            a, t = a * L["idt"][o], t * L["idt"][o]
                        if resnet(L):
                            a += src[oi * ld + r]
                            t += src[(ni + oi) * ld + r]
                        if last:
                            if r < rows:
                                out[(row0 + r) * no + o] = a
                                out[(n + row0 + r) * no + o] = t
                        else:
                            dst[o * ld + r] = a
                            dst[(no + o) * ld + r] = t
    return out


worst = 0.0
for widths, idt, bias in (([1, 3, 6, 6], True, True), ([1, 4, 8], False, True),
                          ([1, 5], True, False), ([1, 2, 4, 8, 5], True, True)):
    net = make_net(widths, idt, bias)
    for n, tile, threads, pad in ((37, 16, 64, 2), (16, 16, 32, 2), (5, 8, 32, 4), (70, 32, 96, 2)):
        s = rng.normal(size=n)
        got = fused(net, s, tile, threads, pad)
        M = widths[-1]
        want = np.zeros(2 * n * M)
        for r in range(n):
            v, t = naive(net, s[r])
            want[r * M:(r + 1) * M], want[(n + r) * M:(n + r + 1) * M] = v, t
        err = np.max(np.abs(got - want))
        worst = max(worst, err)
        assert np.isfinite(got).all() and err < 1e-12, (widths, n, tile, err)
print(f"slots_embed_fused emulated on 4 nets x 4 tilings: worst |G - naive| {worst:.1e}")
