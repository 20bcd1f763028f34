// matmul_accumulating
@group(0) @binding(0) var<storage, read> p0: array<f32>; // a
@group(0) @binding(1) var<storage, read> p1: array<f32>; // b
@group(0) @binding(2) var<storage, read_write> p2: array<f32>; // c
struct Params {
    p3: u64,
    b0: u32,
    n0: u32,
    b1: u32,
    n1: u32,
    b2: u32,
    n2: u32,
    acc_groups: u32,
}
@group(0) @binding(3) var<storage, read> params: Params;
@group(0) @binding(4) var<storage, read_write> acc_status: array<atomic<u32>, 5>;
fn acc_trips32(n: u64) -> u32 {
    if (u32(n >> 32u) != 0u) { atomicCompareExchangeWeak(&acc_status[0], 0u, 3u); return 0u; }
    return u32(n);
}
fn acc_chunks_of(n: u64) -> u32 {
    let c = (n >> 31u) + select(0lu, 1lu, (u32(n) & 2147483647u) != 0u);
    return acc_trips32(c);
}
fn acc_in_bounds(param: u32, i: u64, len: u32) -> bool {
    if (u32(i >> 32u) == 0u && u32(i) < len) { return true; }
    if (atomicCompareExchangeWeak(&acc_status[0], 0u, 1u).exchanged) {
        atomicStore(&acc_status[1], param);
        atomicStore(&acc_status[2], u32(i));
        atomicStore(&acc_status[3], len);
        atomicStore(&acc_status[4], u32(i >> 32u));
    }
    return false;
}
@compute @workgroup_size(256)
fn matmul_accumulating_gpu(@builtin(global_invocation_id) acc_gid: vec3<u32>, @builtin(local_invocation_index) acc_lid: u32, @builtin(workgroup_id) acc_wg: vec3<u32>, @builtin(num_workgroups) acc_nwg: vec3<u32>) {
    var l0: u64;
    var l1: u64;
    var l2: u64;
    var l3: u64;
    var l4: u64;
    var l5: u64;
    var l6: u64;
    var l7: u64;
    var l8: u64;
    var l9: f32;
    l0 = 0lu;
    l1 = params.p3;
    let acc_stride: u32 = acc_nwg.x * 256u;
    let acc_trips_g0: u64 = select(0lu, (l1 - l0), (l0 < l1));
    let acc_trips_g: u64 = acc_trips_g0;
    let acc_chunks_g: u32 = acc_chunks_of(acc_trips_g);
    var acc_c_g: u32 = 0u;
    for (; acc_c_g < acc_chunks_g; acc_c_g = acc_c_g + 1u) {
    let acc_base_g: u64 = u64(acc_c_g) << 31u;
    let acc_left_g: u64 = acc_trips_g - acc_base_g;
    let acc_end_g: u32 = select(u32(acc_left_g), 2147483648u, (u32(acc_left_g >> 32u) | (u32(acc_left_g) >> 31u)) != 0u);
    var acc_k_g: u32 = acc_gid.x;
    for (; acc_k_g < acc_end_g; acc_k_g = acc_k_g + acc_stride) {
        l2 = l0 + u64((acc_base_g + u64(acc_k_g))) * 1lu;
        l3 = 0lu;
        l4 = params.p3;
        { let acc_n2: u32 = acc_trips32(select(0lu, (l4 - l3), (l3 < l4)));
        for (var acc_k2: u32 = 0u; acc_k2 < acc_n2; acc_k2 = acc_k2 + 1u) {
            l5 = l3 + u64(acc_k2) * 1lu;
            l6 = 0lu;
            l7 = params.p3;
            if ((select(0lu, (l7 - l6), (l6 < l7)) > 0lu)) {
                l9 = p2[params.b2 + select(0u, u32(((l2 * params.p3) + l5)), acc_in_bounds(2u, ((l2 * params.p3) + l5), params.n2))];
            }
            { let acc_n3: u32 = acc_trips32(select(0lu, (l7 - l6), (l6 < l7)));
            for (var acc_k3: u32 = 0u; acc_k3 < acc_n3; acc_k3 = acc_k3 + 1u) {
                l8 = l6 + u64(acc_k3) * 1lu;
                l9 = (l9 + (p0[params.b0 + select(0u, u32(((l2 * params.p3) + l8)), acc_in_bounds(0u, ((l2 * params.p3) + l8), params.n0))] * p1[params.b1 + select(0u, u32(((l8 * params.p3) + l5)), acc_in_bounds(1u, ((l8 * params.p3) + l5), params.n1))]));
            } }
            if ((select(0lu, (l7 - l6), (l6 < l7)) > 0lu)) {
                { let acc_i = ((l2 * params.p3) + l5); if (acc_in_bounds(2u, acc_i, params.n2)) { p2[params.b2 + u32(acc_i)] = l9; } }
            }
        } }
    }
    }
}
