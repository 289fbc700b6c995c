/**
 * The sentinel container and reboot pod run the node's own `reboot` through nsenter, so their image
 * defaults to the skyhook image (util-linux nsenter), not a busybox whose applets win over the host's
 * commands (reference/real-node.md §5.3).
 */
import { describe, expect, it } from '@jest/globals';
import { readSkyhookSettings } from '../../../src/controllers/skyhook/skyhook-settings.js';
import { readNodeOpSettings, SKYHOOK_IMAGE } from '../../../src/templates/nodeop-settings.js';

describe('the sentinel/reboot pod image', () => {
  it('is the skyhook image by default, the same as the agent image', () => {
    expect(SKYHOOK_IMAGE).toBe('ghcr.io/skyhook-ts/skyhook:0.1.0');
    expect(readNodeOpSettings({}).helperImage).toBe(SKYHOOK_IMAGE);
    expect(readSkyhookSettings({}, 'skyhook').agentImage).toBe(SKYHOOK_IMAGE);
  });

  it('follows AGENT_IMAGE, so a mirrored agent image needs no second setting', () => {
    expect(readNodeOpSettings({ AGENT_IMAGE: 'mirror.example/skyhook:0.1.0' }).helperImage).toBe(
      'mirror.example/skyhook:0.1.0',
    );
  });

  it('is SENTINEL_IMAGE when that is set', () => {
    expect(
      readNodeOpSettings({ AGENT_IMAGE: 'mirror.example/skyhook:0.1.0', SENTINEL_IMAGE: 'tools.example/nsenter:1' })
        .helperImage,
    ).toBe('tools.example/nsenter:1');
  });

  it('leaves the default image of NodeOps without spec.image at busybox', () => {
    expect(readNodeOpSettings({}).defaultImage).toBe('busybox:1.37');
  });
});
