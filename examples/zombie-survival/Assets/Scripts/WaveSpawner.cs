using UnityEngine;

public class WaveSpawner : MonoBehaviour
{
    public WaveConfig config;
}
