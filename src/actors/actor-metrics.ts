/**
 * The actor host's own counters, read when scraped (the hot path pays nothing for them):
 *
 *   chat_actors                                   gauge: conversation actors in memory
 *   chat_actor_activations_total                  actors loaded (a conversation's state read)
 *   chat_actor_passivations_total                 idle actors dropped from memory
 *   chat_actor_fenced_total                       actors that found a newer owner had taken over
 *   chat_actor_event_publish_failures_total       events the bus refused: the change stands (it
 *                                                 is stored), live delivery of it was missed
 *   chat_push_jobs_dropped_total                  push jobs the bus refused (queue full)
 */
import { Gauge, type Registry } from 'prom-client';
import { scrapedCounter } from '../metrics/scraped.ts';
import type { ActorHostStats } from './types.ts';

export function registerActorMetrics(registry: Registry, stats: () => ActorHostStats): void {
  new Gauge({
    name: 'chat_actors',
    help: 'Conversation actors in memory',
    registers: [registry],
    collect() {
      this.set(stats().actors);
    },
  });
  const counter = (name: string, help: string, read: (s: ActorHostStats) => number): void => scrapedCounter(registry, name, help, () => read(stats()));
  counter('chat_actor_activations_total', 'Conversation actors loaded (their state read from the store)', (s) => s.activations);
  counter('chat_actor_passivations_total', 'Idle conversation actors dropped from memory', (s) => s.passivations);
  counter('chat_actor_fenced_total', 'Conversation actors that found a newer owner had taken over', (s) => s.fenced);
  counter('chat_actor_event_publish_failures_total', 'Events the bus refused: the change is stored, its live delivery was missed', (s) => s.publishFailures);
  counter('chat_push_jobs_dropped_total', 'Push jobs the bus refused (its queue full): those messages made no notification', (s) => s.pushJobsDropped);
}
