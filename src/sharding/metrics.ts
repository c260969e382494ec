/**
 * Cluster metrics: the ring this node sees and what its router did. Read from the sharding
 * layer's own counters when scraped, so the hot path pays nothing for them.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Sharding } from './index.ts';

export function registerShardingMetrics(registry: Registry, sharding: Sharding): void {
  new Gauge({
    name: 'chat_cluster_nodes',
    help: 'Live nodes in this node’s view of the ring',
    registers: [registry],
    collect() {
      this.set(sharding.membership.view.nodes.length);
    },
  });
  new Gauge({
    name: 'chat_cluster_membership_healthy',
    help: '1 while this node reaches Redis for membership, 0 while it routes by its last view',
    registers: [registry],
    collect() {
      this.set(sharding.healthy() ? 1 : 0);
    },
  });
  new Counter({
    name: 'chat_actor_calls_total',
    help: 'Conversation operations by where they ran: local, forwarded (to the owner), retried, unavailable (ended in a retryable 503)',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ outcome: 'local' }, sharding.stats.local);
      this.inc({ outcome: 'forwarded' }, sharding.stats.forwarded);
      this.inc({ outcome: 'retried' }, sharding.stats.retries);
      this.inc({ outcome: 'unavailable' }, sharding.stats.unavailable);
    },
  });
}
