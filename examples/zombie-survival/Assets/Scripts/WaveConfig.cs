using UnityEngine;

[CreateAssetMenu]
public class WaveConfig : ScriptableObject
{
    public int zombiesPerWave = 10;
}
