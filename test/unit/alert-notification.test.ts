import { describe, expect, it } from "vitest";
import { linked } from "../../workers/api/alerts/links.js";
import { type AlertNotification, bodyFor } from "../../workers/api/alerts/notification.js";

const PROJECT = "6f1c2b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f";
const PROFILE = "0b9e6a44-5c1d-4e2f-8a3b-7c6d5e4f3a2b";

/** A fixed evaluation: every byte of its notifications is known. */
function alert(origin: string, cells = 2): AlertNotification {
  return {
    type: "alert.triggered",
    eventId: "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a",
    createdAt: "2026-05-04T10:15:00.000Z",
    projectId: PROJECT,
    rule: {
      id: "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d",
      name: "Harbor <frame rate> & co",
      metric: "fps",
      thresholdLevel: "warn",
      failPercentage: 20,
      evaluationDays: 7,
      cellSize: 25,
    },
    thresholdProfile: { id: PROFILE, name: "Mid PC", threshold: 30 },
    map: { id: "2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e", mapId: "harbor", name: "Harbor" },
    result: { status: "triggered", failCount: 7, totalCount: 30, failPercentage: 23.333333333333332 },
    ...linked({
      origin,
      projectId: PROJECT,
      metric: "fps",
      profileId: PROFILE,
      record: {
        mapId: "harbor",
        days: 7,
        cellSize: 25,
        cells: [
          { x: -50, y: 125, cellSize: 25, value: 12.5, samples: 48, failingShare: 0.75 },
          { x: 0, y: 25, cellSize: 25, value: 21.25, samples: 1, failingShare: 1 },
        ].slice(0, cells),
      },
    }),
  };
}

const decode = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b)) as Record<string, unknown>;

describe("alert notification bodies", () => {
  it("Slack: the text fallback and Block Kit blocks linking the heatmap and each worst cell", () => {
    expect(decode(bodyFor("slack", alert("https://app.example.com")))).toMatchInlineSnapshot(`
      {
        "blocks": [
          {
            "text": {
              "emoji": false,
              "text": "Alert triggered: Harbor <frame rate> & co",
              "type": "plain_text",
            },
            "type": "header",
          },
          {
            "fields": [
              {
                "text": "*Profile*
      Mid PC (warn)",
                "type": "mrkdwn",
              },
              {
                "text": "*Window*
      Last 7 days, cells of 25",
                "type": "mrkdwn",
              },
            ],
            "text": {
              "text": "*7 of 30 cells (23.33%)* on *Harbor* have mean fps below 30 fps; the rule allows 20%.",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "text": {
              "text": "*Worst cells*
      1. <https://app.example.com/projects/6f1c2b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f/heatmap?map=harbor&metric=fps&profile=0b9e6a44-5c1d-4e2f-8a3b-7c6d5e4f3a2b&build=&cell=25&days=7&at=-50,125|(-50, 125)>  12.5 fps over 48 samples, 75 % failing
      2. <https://app.example.com/projects/6f1c2b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f/heatmap?map=harbor&metric=fps&profile=0b9e6a44-5c1d-4e2f-8a3b-7c6d5e4f3a2b&build=&cell=25&days=7&at=0,25|(0, 25)>  21.25 fps over 1 sample, 100 % failing",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "elements": [
              {
                "action_id": "open_heatmap",
                "text": {
                  "text": "Open heatmap",
                  "type": "plain_text",
                },
                "type": "button",
                "url": "https://app.example.com/projects/6f1c2b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f/heatmap?map=harbor&metric=fps&profile=0b9e6a44-5c1d-4e2f-8a3b-7c6d5e4f3a2b&build=&cell=25&days=7",
              },
            ],
            "type": "actions",
          },
          {
            "elements": [
              {
                "text": "Evaluated 2026-05-04T10:15:00.000Z · event 9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a",
                "type": "mrkdwn",
              },
            ],
            "type": "context",
          },
        ],
        "text": "Alert "Harbor <frame rate> & co" triggered on map Harbor (profile Mid PC): 7 of 30 cells (23.33%) have mean fps below the warn threshold 30; the rule allows 20%.",
      }
    `);
  });

  it("Slack without a public origin: cells as text, no button; without worst cells (an older message): no list", () => {
    const relative = decode(bodyFor("slack", alert("")));
    const blocks = JSON.stringify(relative.blocks);
    expect(blocks).toContain("1. (-50, 125)  12.5 fps over 48 samples");
    expect(blocks).not.toContain("<http");
    expect(blocks).not.toContain('"actions"');
    const { worstCells: _w, links: _l, ...older } = alert("https://app.example.com");
    const plain = decode(bodyFor("slack", older));
    expect(JSON.stringify(plain.blocks)).not.toContain("Worst cells");
    expect(plain.text).toBe(relative.text);
  });

  it("webhook: the alert itself, new fields after the old ones", () => {
    const a = alert("https://app.example.com/", 1);
    expect(decode(bodyFor("webhook", a))).toEqual(JSON.parse(JSON.stringify(a)));
    expect(a.links?.heatmap).toBe(
      `https://app.example.com/projects/${PROJECT}/heatmap?map=harbor&metric=fps&profile=${PROFILE}&build=&cell=25&days=7`,
    );
    expect(a.worstCells?.[0]?.link).toBe(`${a.links?.heatmap}&at=-50,125`);
  });
});
