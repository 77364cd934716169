/** The workflows the cases serve (bench/run.js and bench/ab.js), beside FLOW_STEPS (floor-server.js). */

/** The routed case: one URL routed by a field of the body (switch), a code step in one branch. */
export const ROUTED_STEPS = [
  {
    name: 'route',
    type: 'switch',
    value: '{{ body.param1 }}',
    cases: [
      {
        equals: 'a',
        steps: [{ name: 'total', type: 'code', source: 'return { total: $input.body.param2.length * 2 }' }],
      },
      { equals: 'b', steps: [{ name: 'other', type: 'set', fields: { other: true } }] },
    ],
  },
];

/** Creates a workflow through the API (`api`: processes.js apiClient) and activates it. */
export async function activeWorkflow(api, body) {
  const wf = await api('POST', '/api/v1/workflows', body);
  await api('POST', `/api/v1/workflows/${wf.id}/activate`);
  return wf;
}
