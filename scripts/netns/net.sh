# shellcheck shell=bash
# Reach: the election over IPv6 and over IPv4 multicast, on networks where
# subnet broadcast is filtered. Sourced by scripts/netns-test.sh.
#
#   sudo scripts/netns-test.sh --scenarios startup,ipv6,multicast
#
# Each scenario restarts the cluster on another transport, checks that it
# elects one leader, fails over when the leader's process is killed (the
# survivors' probe of its closed port must say so), that the killed node
# rejoins as follower and that `lanleader who` finds the leader over the same
# transport; the suite's exactly-once check then covers the job runs. IPv6
# addresses are ULAs (fd00:198:18::/64) that exist only inside the
# namespaces; IPv4 subnet broadcast is dropped on the bridge meanwhile, so
# only multicast (and unicast) can carry the election.

NET_V6_PREFIX=fd00:198:18:
NET_PROBE_MSG="leader's port is closed: its process is gone; suspecting it now"

net_ip6() { echo "${NET_V6_PREFIX}:$((10 + $1))"; }

# net_v6_up gives every node an IPv6 ULA (no duplicate address detection,
# so it is usable at once).
net_v6_up() {
	local i
	for ((i = 1; i <= NODES; i++)); do
		ip -n "$(llt_ns "$i")" addr replace "$(net_ip6 "$i")/64" dev eth0 nodad || return 1
	done
}

# net_block_broadcast drops IPv4 datagrams to the subnet broadcast address
# on the bridge, as a Wi-Fi access point or a managed switch may (ARP still
# passes). llt_heal removes it.
net_block_broadcast() {
	llt_nft add rule bridge llt oneway meta protocol ip ip daddr "${LLT_NET}.255" counter drop
}

# net_restart NAME "ARGS" BINDFN: restarts the cluster with ARGS added to
# every node and --bind from BINDFN I; fails NAME if it does not settle.
net_restart() {
	local name=$1 args=$2 bindfn=$3 i
	cluster_stop
	read -r -a NODE_ARGS <<<"$args"
	for ((i = 1; i <= NODES; i++)); do NODE_ARGS_ONE[$i]="--bind $($bindfn "$i")"; done
	for ((i = 1; i <= NODES; i++)); do node_start "$i"; done
	if llt_poll 10000 100 agree "$(alive_nodes)"; then
		pass "$name: one leader (n$AGREED, term $AGREED_TERM), all $NODES agree"
	else
		fail "$name: no single agreed leader within 10 s ($VIEW) $(dead_report)"
		return 1
	fi
}

# net_restore puts the suite's default cluster back (broadcast, IPv4).
net_restore() {
	cluster_stop
	llt_heal
	NODE_ARGS=()
	NODE_ARGS_ONE=()
	local i
	for ((i = 1; i <= NODES; i++)); do node_start "$i"; done
	settle "$1"
}

# net_who NAME "ARGS" BIND: `lanleader who` from node 1's namespace, over
# the same transport, must name the agreed leader.
net_who() {
	local name=$1 args=$2 bind=$3 out
	# shellcheck disable=SC2086
	out=$(timeout 5 ip netns exec "$(llt_ns 1)" "$BIN" who --cluster "$CLUSTER" --port "$UDP_PORT" \
		--bind "$bind" $args --timeout 500ms 2>&1)
	if grep -q "n$AGREED" <<<"$out"; then
		pass "$name: lanleader who $args finds leader n$AGREED"
	else
		fail "$name: lanleader who $args did not name n$AGREED: $(tr '\n' ' ' <<<"$out" | cut -c1-300)"
	fi
}

# net_failover NAME: SIGKILL the leader (its host stays up); the survivors
# agree on another within the crash bound, one of them learnt of the dead
# process from its probe, the new leader runs the job, and the killed node
# rejoins as follower.
net_failover() {
	local name=$1 L=$AGREED t0 rest r ms
	just_after_a_run
	llt_node_crash "$L"
	t0=$LLT_CRASH_MS
	rest=$(alive_nodes)
	if ! llt_poll $((FAILOVER_BOUND_MS + 5000)) 50 agree "$rest"; then
		fail "$name: survivors did not agree on a new leader after killing n$L ($VIEW)"
		FAILOVERS+=("$name:$((t0 - 1000)):$(($(llt_now_ms) + 2000))")
		return 1
	fi
	FAILOVERS+=("$name:$((t0 - 1000)):$(($(llt_now_ms) + 2000))")
	if r=$(first_leader_after "$t0" "$rest"); then
		ms=$(ms_between "$t0" "${r%% *}")
		if ((ms <= FAILOVER_BOUND_MS)); then
			pass "$name: n$L killed, n${r##* } became leader after $ms ms (bound $FAILOVER_BOUND_MS)"
		else
			fail "$name: n$L killed, n${r##* } became leader after $ms ms > bound $FAILOVER_BOUND_MS"
		fi
	else
		fail "$name: n$AGREED leads but logged no 'became leader' after the kill"
	fi
	# shellcheck disable=SC2046
	if python3 "$HELPER" first-event --after "$t0" --msg "$NET_PROBE_MSG" $(logs_of "$rest") >/dev/null; then
		pass "$name: a survivor's probe found n$L's port closed (ICMP unreachable)"
	else
		fail "$name: no survivor logged '$NET_PROBE_MSG' after n$L was killed"
	fi
	runs_jobs "$name"
	local lead=$AGREED term=$AGREED_TERM
	node_start "$L"
	if llt_poll 5000 100 agree "$(alive_nodes)" && [ "$AGREED" = "$lead" ] && [ "$AGREED_TERM" = "$term" ]; then
		pass "$name: n$L rejoined as follower of n$lead"
	else
		fail "$name: after n$L rejoined: $VIEW (leader was n$lead term $term)"
	fi
}

sc_ipv6() {
	say "IPv6: multicast group ff02::4c4c:… on fd00:198:18::/64, broadcast blocked"
	settle ipv6 || return
	net_v6_up || { fail "ipv6: could not add IPv6 addresses"; return; }
	net_block_broadcast
	if net_restart ipv6 "--transport multicast" net_ip6; then
		net_who ipv6 "--transport multicast" "$(net_ip6 1)"
		net_failover ipv6
	fi
	local i peers=""
	for ((i = 1; i <= NODES; i++)); do peers+="[$(net_ip6 "$i")]:$UDP_PORT,"; done
	# Without quorum, as the multicast run: the failover checked is the
	# probe's (a follower in quorum mode waits out its promise instead).
	if net_restart ipv6-unicast "--peers ${peers%,} --quorum off" net_ip6; then
		net_failover ipv6-unicast
	fi
	net_restore ipv6
}

sc_multicast() {
	say "IPv4 multicast, subnet broadcast blocked on the bridge"
	settle multicast || return
	net_block_broadcast
	if net_restart multicast "--transport multicast" llt_ip; then
		net_who multicast "--transport multicast" "$(llt_ip 1)"
		local before after
		before=$(llt_counter oneway)
		net_failover multicast
		after=$(llt_counter oneway)
		info "multicast: broadcast datagrams dropped on the bridge meanwhile: $((after - before))"
	fi
	net_restore multicast
}

register_scenario ipv6 default
register_scenario multicast default
