"""Emulates se_e2_a over all slots (dp_eval.cu, evaluate_se_slots with the layers run by
cuBLAS: column-major calls, kernel index math, the contractions of se_e2a_contract.cuh) in numpy
and checks T, D and the forces against a naive per-centre computation (forces by finite
differences of E = sum_i <W_i, D_i>).
Run with a Python that has numpy (/root/dpenv/bin/python on the build machine)."""
import numpy as np
rng = np.random.default_rng(1)
ntypes, sel = 2, [3, 5]
off = [0, 3, 8]; nnei = 8
M, M2 = 6, 3
widths = [1, 3, 6]   # layer 0: 1->3, layer 1: 3->6 (resnet DOUBLE: 6 == 2*3)
rc = 3.2
# one-side nets: net per neighbour type
nets = []
for t in range(ntypes):
    L = []
    for l in range(len(widths) - 1):
        L.append(dict(w=rng.normal(size=(widths[l], widths[l+1])) * 0.7, b=rng.normal(size=widths[l+1]),
                      idt=rng.normal(size=widths[l+1]) * 0.3 + 1, n_in=widths[l], n_out=widths[l+1]))
    nets.append(L)
avg = rng.normal(size=(ntypes, nnei, 4)) * 0.1; std = rng.uniform(0.5, 1.5, size=(ntypes, nnei, 4))
natoms = 7
types = np.array([0, 1, 1, 0, 1, 0, 1])
X0 = rng.uniform(0, 3.0, size=(natoms, 3))
W = rng.normal(size=(natoms, M, M2))

def sw(r):  # smooth switch, any smooth positive function ending at rc
    u = r / rc
    return (1 - u) ** 3 / r if r < rc else 0.0
def env_raw(d):
    r = np.linalg.norm(d); s = sw(r)
    return np.array([s, s * d[0] / r, s * d[1] / r, s * d[2] / r])
def env_jac(d, h=1e-6):
    J = np.zeros((4, 3))
    for q in range(3):
        e = np.zeros(3); e[q] = h
        J[:, q] = (env_raw(d + e) - env_raw(d - e)) / (2 * h)
    return J

def select(X, i):
    """slots[j] = neighbour index or -1, nearest sel[t] of each type (no periodicity)."""
    out = -np.ones(nnei, int)
    d = [(np.linalg.norm(X[j] - X[i]), j) for j in range(natoms) if j != i and np.linalg.norm(X[j] - X[i]) < rc]
    d.sort()
    for t in range(ntypes):
        js = [j for _, j in d if types[j] == t][:sel[t]]
        for q, j in enumerate(js):
            out[off[t] + q] = j
    return out

def net_eval(L, s):
    """value and tangent of one input s (naive)."""
    v = np.array([s]); t = np.array([1.0])
    for lay in L:
        z = v @ lay["w"] + lay["b"]; zt = t @ lay["w"]
        a = np.tanh(z); da = (1 - a * a) * zt
        a = a * lay["idt"]; da = da * lay["idt"]
        if lay["n_out"] == 2 * lay["n_in"]:
            a = a + np.concatenate([v, v]); da = da + np.concatenate([t, t])
        elif lay["n_out"] == lay["n_in"]:
            a = a + v; da = da + t
        v, t = a, da
    return v, t

def naive_D(X, slots_fixed=None):
    Ds, Ts = [], []
    for i in range(natoms):
        ti = types[i]
        sl = select(X, i) if slots_fixed is None else slots_fixed[i]
        T = np.zeros((M, 4))
        for j in range(nnei):
            tau = 0 if j < off[1] else 1
            nb = sl[j]
            R = (env_raw(X[nb] - X[i]) - avg[ti, j]) / std[ti, j] if nb >= 0 else -avg[ti, j] / std[ti, j]
            g, _ = net_eval(nets[tau], R[0])
            T += np.outer(g, R)
        T /= nnei
        Ts.append(T); Ds.append(T @ T[:M2].T)
    return np.array(Ts), np.array(Ds)

# ---------------- emulation of the CUDA path (all centres in one chunk, fit net ignored) -----
def gemm(ta, tb, m, n, k, alpha, A, ao, lda, B, bo, ldb, beta, C, co, ldc):
    opA = np.array([[A[ao + (i + l * lda if ta == 'N' else l + i * lda)] for l in range(k)] for i in range(m)])
    opB = np.array([[B[bo + (l + j * ldb if tb == 'N' else j + l * ldb)] for j in range(n)] for l in range(k)])
    res = alpha * opA @ opB
    for i in range(m):
        for j in range(n):
            idx = co + i + j * ldc
            C[idx] = res[i, j] + (beta * C[idx] if beta != 0 else 0.0)
def slot_index(rows, row, j, tau):
    return rows * off[tau] + row * sel[tau] + (j - off[tau])

def emulate(X):
    rows = natoms; idx = list(range(natoms)); nslots = rows * nnei
    slots = np.array([select(X, i) for i in range(natoms)]).ravel()
    s = np.zeros(nslots); Rr = np.zeros(4 * nslots); jac = np.zeros(12 * nslots)
    for e in range(nslots):            # slots_env
        row, j = e // nnei, e % nnei; i = idx[row]; ti = types[i]; tau = 0 if j < off[1] else 1
        nb = slots[row * nnei + j]; p = slot_index(rows, row, j, tau)
        if nb >= 0:
            R = (env_raw(X[nb] - X[i]) - avg[ti, j]) / std[ti, j]; J = env_jac(X[nb] - X[i])
            live = 1
        else:
            R = -avg[ti, j] / std[ti, j]; J = np.zeros((4, 3)); live = 0
        s[p] = R[0]
        Rr[4 * p:4 * p + 4] = R if live else 0
        jac[12 * p:12 * p + 12] = J.ravel() if live else 0
    G = np.zeros(2 * nslots * M); Tm = np.zeros(rows * M * 4)
    maxsel = max(sel); emb_a = np.zeros(2 * rows * maxsel * max(widths)); emb_b = emb_a.copy()
    for tau in range(ntypes):
        n = rows * sel[tau]; Go = 2 * rows * off[tau] * M
        bufs = {'a': emb_a, 'b': emb_b}; inb, nxt = 'a', 'b'
        L = nets[tau]
        for l, lay in enumerate(L):
            last = l == len(L) - 1
            dst, do = (G, Go) if last else (bufs[nxt], 0)
            w = lay["w"].ravel(); no = lay["n_out"]; ni = lay["n_in"]
            if l == 0:                  # slots_first_layer
                for e in range(n * no):
                    r, o = e // no, e % no
                    sv = s[rows * off[tau] + r]
                    z = sv * w[o] + lay["b"][o]; a = np.tanh(z); t = (1 - a * a) * w[o]
                    a *= lay["idt"][o]; t *= lay["idt"][o]
                    if no == 2 * ni or no == ni:
                        a += sv; t += 1.0
                    dst[do + e] = a; dst[do + n * no + e] = t
            else:
                src = bufs[inb]
                gemm('N', 'N', no, 2 * n, ni, 1.0, w, 0, no, src, 0, ni, 0.0, dst, do, no)
                for e in range(n * no):   # slots_layer
                    r, o = e // no, e % no; nt = n * no
                    zv = dst[do + e] + lay["b"][o]; a = np.tanh(zv)
                    t = (1 - a * a) * dst[do + nt + e]
                    a *= lay["idt"][o]; t *= lay["idt"][o]
                    if no == 2 * ni or no == ni:
                        oi = o if no == ni else o % ni
                        a += src[r * ni + oi]; t += src[n * ni + r * ni + oi]
                    dst[do + e] = a; dst[do + nt + e] = t
            if not last:
                inb, nxt = nxt, inb
    for row in range(rows):             # slots_T: a block per centre, a thread per unit u
        R_row = np.zeros(4 * nnei)
        for tau in range(ntypes):
            Rb = 4 * (rows * off[tau] + row * sel[tau])
            R_row[4 * off[tau]:4 * off[tau] + 4 * sel[tau]] = Rr[Rb:Rb + 4 * sel[tau]]
        for u in range(M):
            t = np.zeros(4)
            for tau in range(ntypes):
                Gb = (2 * rows * off[tau] + row * sel[tau]) * M + u
                for j in range(sel[tau]):
                    t += G[Gb + j * M] * R_row[4 * (off[tau] + j):4 * (off[tau] + j) + 4]
            Tm[(row * M + u) * 4:(row * M + u) * 4 + 4] = t / nnei
    # pad: the empty slots' share, naive (pad_sum is a model constant on the GPU)
    T = Tm.reshape(rows, M, 4).copy()
    for row in range(rows):
        i = idx[row]; ti = types[i]
        for j in range(nnei):
            if slots[row * nnei + j] < 0:
                tau = 0 if j < off[1] else 1
                R = -avg[ti, j] / std[ti, j]; g, _ = net_eval(nets[tau], R[0])
                T[row] += np.outer(g, R) / nnei
    D = np.array([T[r] @ T[r][:M2].T for r in range(rows)])
    # backward with dE/dD = W
    gamma = np.zeros(rows * 4 * M)
    for row in range(rows):          # gamma_from_dD
        dDr = W[row].ravel(); Tr = T[row].ravel()
        for e in range(4 * M):
            a, c = e % M, e // M
            v = sum(dDr[a * M2 + b] * Tr[4 * b + c] for b in range(M2))
            if a < M2:
                v += sum(dDr[a2 * M2 + a] * Tr[4 * a2 + c] for a2 in range(M))
            gamma[row * 4 * M + c * M + a] = v / nnei
    pxy = np.zeros(8 * nslots)          # px, then py = pxy[4 nslots:]
    for row in range(rows):             # slots_pxy: a block per centre and type block, a warp per slot
        g_row = gamma[row * 4 * M:(row + 1) * 4 * M]
        for tau in range(ntypes):
            n = rows * sel[tau]; first = rows * off[tau] + row * sel[tau]
            Gv = (2 * rows * off[tau] + row * sel[tau]) * M; Gt = Gv + n * M
            for j in range(sel[tau]):
                for c in range(4):
                    pxy[4 * (first + j) + c] = sum(G[Gv + j * M + u] * g_row[c * M + u] for u in range(M))
                    pxy[4 * nslots + 4 * (first + j) + c] = sum(G[Gt + j * M + u] * g_row[c * M + u]
                                                                for u in range(M))
    F = np.zeros((natoms, 3))
    for e in range(nslots):          # slots_forces
        row, j = e // nnei, e % nnei; i = idx[row]; ti = types[i]; tau = 0 if j < off[1] else 1
        nb = slots[row * nnei + j]
        if nb < 0:
            continue
        p = slot_index(rows, row, j, tau)
        Rp = Rr[4 * p:4 * p + 4]; J = jac[12 * p:12 * p + 12]
        a = pxy[4 * p:4 * p + 4]; b = pxy[4 * nslots + 4 * p:4 * nslots + 4 * p + 4]
        g = a.copy(); g[0] += b @ Rp
        for q in range(3):
            v = sum(g[c] / std[ti, j, c] * J[3 * c + q] for c in range(4))
            F[nb, q] -= v; F[i, q] += v
    return T, D, F, slots.reshape(natoms, nnei)

T_e, D_e, F_e, slots = emulate(X0)
T_n, D_n = naive_D(X0)
print("T max diff", np.abs(T_e - T_n).max(), "D max diff", np.abs(D_e - D_n).max(), "|D|", np.abs(D_n).max())
# forces by finite differences of E = sum <W, D> with the selection fixed
h = 1e-5; F_fd = np.zeros((natoms, 3))
for a in range(natoms):
    for q in range(3):
        Xp = X0.copy(); Xp[a, q] += h; Xm = X0.copy(); Xm[a, q] -= h
        Ep = (W * naive_D(Xp, slots)[1]).sum(); Em = (W * naive_D(Xm, slots)[1]).sum()
        F_fd[a, q] = -(Ep - Em) / (2 * h)
print("F max diff", np.abs(F_e - F_fd).max(), "|F|", np.abs(F_fd).max())
# T and D as exact as the arithmetic; the forces as finite differences of step 1e-5 allow
assert np.abs(T_e - T_n).max() < 1e-14 and np.abs(D_e - D_n).max() < 1e-14
assert np.abs(F_e - F_fd).max() < 1e-8 * max(1.0, np.abs(F_fd).max())
